"""The film's sound as a standalone library: voices, a temp score, temp effects, audio model families, upload
checks and one mix at a delivery loudness. Plain typed inputs (a line's text, a voice, a cue's words, seconds,
a seed) in, WAV files and measured figures out; nothing here knows projects or storyboards.
"""
