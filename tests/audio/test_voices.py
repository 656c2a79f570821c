"""Real Piper voices for two characters, measured apart; the line cache; an OpenAI-compatible speech endpoint that
records what it got (a real local HTTP server)."""

import io
import json
import threading
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from generation.audio.pcm import read_wav, resample
from generation.audio.voices import SpeechEndpoint, Voice, VoiceError, Voices, cast

pytestmark = pytest.mark.slow  # loads the 60 MB Piper voice

LINE = (
    "The lighthouse keeper lights the lamp at dusk, and the boats come home. "
    "Nobody remembers the winter the light went out, but everyone tells the story."
)
SECOND_LINE = (
    "When the gulls come back in spring, the keeper paints the rail again. "
    "She counts the ships that pass at night and writes their names in a book."
)


def f0(samples, rate):
    """Median fundamental frequency of the voiced frames (YIN: cumulative-mean-normalised difference, 0.2, over 30-ms
    frames: 50-ms frames found a period in only one loud frame of ten of a short Piper line, too few to measure)."""
    x = resample(samples, rate, 16000)
    rate, frame = 16000, 480
    tmin, tmax = rate // 400, rate // 50
    found = []
    for i in range(0, len(x) - frame - tmax, frame // 2):
        w = x[i : i + frame]
        if np.sqrt(np.mean(w**2)) < 0.02:
            continue
        d = np.sum((sliding_window_view(x[i : i + frame + tmax - 1], frame) - w) ** 2, axis=1)  # lag 0..tmax-1
        cm = np.concatenate([[1.0], d[1:] * np.arange(1, tmax) / np.maximum(np.cumsum(d[1:]), 1e-12)])
        below = np.flatnonzero(cm[tmin:] < 0.2)
        if len(below):
            t = tmin + below[0]
            while t + 1 < tmax and cm[t + 1] < cm[t]:
                t += 1
            found.append(rate / t)
    assert len(found) >= 5, "too few voiced frames to measure a pitch"
    return float(np.median(found))


def centroid(samples, rate):
    spectrum = np.abs(np.fft.rfft(samples))
    return float((spectrum * np.fft.rfftfreq(len(samples), 1 / rate)).sum() / spectrum.sum())


def test_two_characters_voices_differ_in_pitch_and_timbre(tmp_path):
    voices = Voices(tmp_path)
    cast_ = cast(["Mara", "Tom"])
    assert cast_["Mara"] != cast_["Tom"]
    a, b = (read_wav(voices.speak(LINE, cast_[n]).path) for n in ("Mara", "Tom"))
    pitch_a, pitch_b = f0(*a), f0(*b)
    semitones = 12 * np.log2(pitch_b / pitch_a)
    print(
        f"Mara {pitch_a:.1f} Hz, Tom {pitch_b:.1f} Hz: {semitones:+.2f} st (asked {cast_['Tom'].pitch:+g}); "
        f"centroid {centroid(*a):.0f} vs {centroid(*b):.0f} Hz"
    )
    # Piper samples noise inside its model (pitch and durations vary by a few percent between runs): measured
    # +4.3 to +6.3 st over runs of one sentence for +5 asked; two sentences steady it
    assert semitones == pytest.approx(cast_["Tom"].pitch - cast_["Mara"].pitch, abs=1.5)
    assert centroid(*b) > 1.15 * centroid(*a)  # the formants moved with the pitch: a different timbre
    # the pace is kept: the pitch shift does not speed the line up by its factor (5 st = x1.33)
    assert len(b[0]) / len(a[0]) == pytest.approx(cast_["Tom"].length_scale, rel=0.2)


def test_voices_in_one_exchange_are_three_semitones_apart_as_measured(tmp_path):
    """Five characters of the one installed speaker in one scene, two more who never meet the first: each pair that
    shares a scene is at least 3 semitones apart, measured by YIN on the same words. A voice is measured over two
    lines (four sentences): Piper samples noise, so one line's pitch is the voice's give or take its drift — one short
    line ("Now. It has to be now. Go, I will follow.") measured -4 against 0 st cast from 3.4 to 3.9 st apart over
    three runs, once under 3; with one two-sentence line, the closest pair measured 3.17-3.92 st apart over seven runs
    here and 2.996 in a CI run (+5 against +9 st, each line a third of a semitone off, in opposite ways); with two
    lines, 3.22-3.41 over four runs (-4 against -8 st: the low shifts come out closer than cast)."""
    names = ["Ada", "Pip", "Rook", "Wren", "Moss", "Fern", "Sloe"]
    together = [set(names[:5]), {"Fern", "Sloe", "Pip"}]
    cast_ = cast(names, together=together)
    voices = Voices(tmp_path)

    def heard(name):
        takes = [read_wav(voices.speak(line, cast_[name]).path) for line in (LINE, SECOND_LINE)]
        return np.concatenate([x for x, _ in takes]), takes[0][1]

    pitch = {n: f0(*heard(n)) for n in names}
    print({n: f"{cast_[n].pitch:+g} st, {pitch[n]:.1f} Hz" for n in names})
    for group in together:
        for a in group:
            for b in group:
                if a < b:
                    apart = abs(12 * np.log2(pitch[a] / pitch[b]))
                    assert apart >= 3.0, f"{a} and {b} are {apart:.1f} semitones apart"


def test_the_piper_session_does_not_spin_and_speaks(tmp_path):
    """onnxruntime's threads busy-wait between operators by default, taking CPU the render's other work is waiting
    for: the voice's session is made with spinning off (a default session has no such entry: it spins)."""
    import onnxruntime

    from generation.audio.voices import SPINNING, piper_voice

    with pytest.raises(RuntimeError):
        onnxruntime.SessionOptions().get_session_config_entry(SPINNING)
    engine = piper_voice()
    assert engine.session.get_session_options().get_session_config_entry(SPINNING) == "0"
    assert engine.session.get_providers() == ["CPUExecutionProvider"]
    spoken = Voices(tmp_path).speak("Hold the rope.", cast(["Mara"])["Mara"])
    samples, rate = read_wav(spoken.path)
    assert spoken.made and len(samples) / rate > 0.4 and np.abs(samples).max() > 0.1


def test_a_line_is_made_once_and_a_changed_line_again(tmp_path):
    voices = Voices(tmp_path / "lines")
    voice = cast(["Mara"])["Mara"]
    first = voices.speak("Hold the rope.", voice)
    again = voices.speak("Hold the rope.", voice)
    assert first.made and not again.made and again.path == first.path and again.seconds == first.seconds
    whispered = voices.speak("Hold the rope.", voice, delivery="whispered")
    other = voices.speak("Hold the rope!", voice)
    assert whispered.made and other.made and len({first.key, whispered.key, other.key}) == 3
    loud, quiet = read_wav(first.path)[0], read_wav(whispered.path)[0]
    assert np.abs(quiet).max() < 0.6 * np.abs(loud).max()  # delivery changes Piper's level
    assert sorted(p.name for p in (tmp_path / "lines").iterdir()) == sorted(
        f"{s.key}.wav" for s in (first, whispered, other)
    )


def test_an_empty_or_huge_line_is_refused(tmp_path):
    voices = Voices(tmp_path)
    with pytest.raises(VoiceError, match="empty"):
        voices.speak("  ", Voice())
    with pytest.raises(VoiceError, match="at most"):
        voices.speak("a" * 5000, Voice())
    assert not list(tmp_path.iterdir())


class SpeechServer:
    """A real HTTP server speaking POST /v1/audio/speech: answers a WAV tone, records paths, headers, bodies."""

    def __init__(self, answer: bytes | None = None):
        self.requests: list[dict] = []
        self.answer = answer

    def __enter__(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(
                    {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                )
                data = server.answer if server.answer is not None else tone(0.8)
                self.send_response(200)
                self.send_header("Content-Type", "audio/wav")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def tone(seconds, rate=24000, hz=220.0):
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        t = np.arange(round(seconds * rate)) / rate
        w.writeframes((0.5 * np.sin(2 * np.pi * hz * t) * 32767).astype("<i2").tobytes())
    return buf.getvalue()


def test_speech_endpoint_gets_the_line_and_its_key_goes_only_there(tmp_path):
    with SpeechServer() as speech, SpeechServer() as other:
        endpoint = SpeechEndpoint(speech.base_url, api_key="sk-speech-secret", model="kokoro")
        assert "sk-speech-secret" not in repr(endpoint)
        voices = Voices(tmp_path, endpoint)
        voice = Voice("openai", speaker="af_bella")
        spoken = voices.speak("Row, row!", voice, delivery="shouting over the wind")
        again = voices.speak("Row, row!", voice, delivery="shouting over the wind")
        assert spoken.made and not again.made and len(speech.requests) == 1 and not other.requests
        got = speech.requests[0]
        assert got["path"] == "/v1/audio/speech"
        assert got["headers"]["authorization"] == "Bearer sk-speech-secret"
        assert got["body"] == {
            "input": "Row, row!",
            "model": "kokoro",
            "voice": "af_bella",
            "response_format": "wav",
            "instructions": "shouting over the wind",
        }
        samples, rate = read_wav(spoken.path)
        assert rate == 48000 and len(samples) / rate == pytest.approx(0.8, abs=0.01)
        assert spoken.label.startswith(f"speech endpoint {speech.base_url}")
        assert "sk-speech-secret" not in spoken.key and all(
            b"sk-speech-secret" not in p.read_bytes() for p in tmp_path.iterdir()
        )


def test_speech_endpoint_answering_not_audio_is_one_line_and_writes_nothing(tmp_path):
    with SpeechServer(answer=b"<html>gateway error</html>") as speech:
        voices = Voices(tmp_path, SpeechEndpoint(speech.base_url, api_key="k"))
        with pytest.raises(VoiceError, match="not audio"):
            voices.speak("Hello.", Voice("openai", speaker="alloy"))
    assert list(tmp_path.iterdir()) == []


def test_an_endpoint_voice_without_an_endpoint_is_refused(tmp_path):
    with pytest.raises(VoiceError, match="no.*endpoint|none is configured"):
        Voices(tmp_path).speak("Hello.", Voice("openai"))


def test_the_speech_key_is_a_secret_setting(tmp_path):
    from app.config import Config, _toml_source

    config = Config(home=tmp_path, speech_base_url="http://127.0.0.1:9/v1", speech_api_key="sk-never-shown")
    assert config.speech_api_key == "sk-never-shown" and "sk-never-shown" not in repr(config)
    toml = tmp_path / "chief.toml"
    toml.write_text('speech_api_key = "sk-in-a-file"\n')
    with pytest.raises(ValueError, match="speech_api_key is a credential"):
        _toml_source(toml)
