"""Scale out on a Ray cluster: shot renders and agent calls on warm worker actors (Stop and progress cross over).

Only used with `chief batch --ray` or CHIEF_RAY_ADDRESS: nothing else in CHIEF imports this module,
and Ray is imported lazily here, so without it nothing changes. The database and the media store stay
with the coordinating process (the Studio): workers return clip bytes and typed results and never
touch the SQLite file. See docs/cluster.md.
"""

from __future__ import annotations

import logging
import os
import queue
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, TypedDict, TypeVar

from agents.base import AgentError, Critic, FilmView, Planner, Refiner, Result
from app.config import Config, with_overrides
from app.errors import StudioError
from generation.base import Backend, ClipInfo, Progress, RenderError, ShotRequest, clip_key
from storage.run import Cancelled, CancelToken, ProgressEvent, RunContext
from storage.schema import Critique, Note, Persona, Proposal, Storyboard

if TYPE_CHECKING:  # the Studio and its context only in the coordinating process: a worker imports neither
    from ray import ObjectRef
    from ray.actor import ActorHandle

    from app.context import AgentSet
    from app.studio import Studio

# What a RayBackend renders with: a Config (the worker runs app.factory.make_backend on it) or a
# picklable zero-argument factory returning a backend (importable on the workers).
BackendSpec = Config | Callable[[], Backend]

_CONTROL = "control"  # actor concurrency group for progress polls and stop requests, beside the work
_CALLS = "calls"  # an agent worker's concurrency group for the calls themselves
_CALLS_PER_WORKER = 16  # agent calls one worker runs at once (threads waiting on HTTP, mostly)


class ClusterError(StudioError):
    """Ray is missing, the cluster cannot be reached, or it cannot host the workers (one line)."""


def _ray():
    try:
        import ray
        import ray.exceptions  # submodules named here so the checker knows them (`import ray` loads both)
        import ray.util.client
    except ModuleNotFoundError:
        raise ClusterError("Ray is not installed: pip install 'chief[ray]'") from None
    return ray


_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Remote(Protocol[_P, _R]):
    """An actor method as its caller sees it: Ray types none on a handle (its `__getattr__` returns Never)."""

    def remote(self, *args: _P.args, **kwargs: _P.kwargs) -> ObjectRef[_R]: ...

    def options(self, *, concurrency_group: str) -> _Remote[_P, _R]: ...


def connect(address: str | None = None) -> None:
    """Join the Ray cluster at `address` ("auto", "HOST:6379", "ray://HOST:10001"), or start a local one."""
    ray = _ray()
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "configure_logging": True}
    try:
        if address in (None, "", "local"):
            ray.init(include_dashboard=False, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as e:  # ConnectionError, RuntimeError, ValueError: all mean "no cluster there"
        where = address or "a new local cluster"
        raise ClusterError(f"could not connect to the Ray cluster at {where}: {str(e).splitlines()[0]}") from None


def worker_config(config: Config) -> Config:
    """The configuration sent to workers: never the API key or the web app's password."""
    return with_overrides(config, api_key="", auth="")


def _build(spec: BackendSpec) -> Backend:
    if isinstance(spec, Config):
        from app.factory import make_backend

        return make_backend(spec)
    return spec()


def _cause(e: Exception) -> Exception:
    """The worker's own exception behind a RayTaskError (RenderError, Cancelled, AgentError...)."""
    cause = getattr(e, "cause", None)
    return cause if isinstance(cause, Exception) else e


# ---------------------------------------------------------------------------------------- renders


class _Described(TypedDict):
    label: str
    pid: int


class _Rendered(TypedDict):
    """A clip as it crosses back from a worker: its bytes and the ClipInfo fields."""

    data: bytes
    num_frames: int
    fps: int
    width: int
    height: int


class _Stats(TypedDict):
    renders: int
    pid: int


class RenderWorker:
    """One Ray actor: builds the backend once, keeps it warm, renders one shot at a time.

    Progress polls and stop requests run in a separate concurrency group, beside the render.
    """

    def __init__(self, spec: BackendSpec) -> None:
        self.backend = _build(spec)
        self.renders = 0
        self.step = (0, 0)
        self.cancel = CancelToken()

    def describe(self) -> _Described:
        return {"label": self.backend.label, "pid": os.getpid()}

    def render(self, request: ShotRequest, init_image: bytes | None) -> _Rendered:
        """Render into a temp file; return the clip's bytes and ClipInfo fields."""
        self.cancel, self.step = CancelToken(), (0, 0)
        with tempfile.TemporaryDirectory(prefix="chief-ray-") as tmp:
            if init_image is not None:
                path = Path(tmp) / "init.png"
                path.write_bytes(init_image)
                request = request.with_(init_image=str(path))
            out = Path(tmp) / "clip.mp4"
            info = self.backend.render(request, out, self._on_step, self.cancel)
            self.renders += 1
            return {
                "data": out.read_bytes(),
                "num_frames": info.num_frames,
                "fps": info.fps,
                "width": info.width,
                "height": info.height,
            }

    def _on_step(self, done: int, total: int) -> None:
        self.step = (done, total)

    def progress(self) -> tuple[int, int]:
        return self.step

    def stop(self) -> None:
        self.cancel.cancel()

    def stats(self) -> _Stats:
        return {"renders": self.renders, "pid": os.getpid()}


if TYPE_CHECKING:

    class _RenderActor(ActorHandle[RenderWorker]):
        """A RenderWorker's handle: the methods the coordinator calls on it."""

        describe: _Remote[[], _Described]
        render: _Remote[[ShotRequest, bytes | None], _Rendered]
        progress: _Remote[[], tuple[int, int]]
        stop: _Remote[[], None]
        stats: _Remote[[], _Stats]


@dataclass
class _Flight:
    """A clip being rendered somewhere in the cluster: later requests for its key wait on it."""

    done: threading.Event = field(default_factory=threading.Event)
    ref: ObjectRef[_Rendered] | None = None  # the worker's result, once it succeeded
    error: BaseException | None = None


class RayBackend:
    """A Backend whose renders run on a pool of Ray actors, each holding the inner backend warm.

    `max_parallel` tells the Studio how many continuity chains it may render at once. A clip key
    already being rendered anywhere through this backend is rendered once: the second request waits
    for the first. A worker that dies mid-shot is restarted by Ray and the shot is resubmitted to the
    next free worker (up to `max_attempts` tries); shots that finished are never redone.

    Workers: one per GPU (`num_gpus=1` each) when the cluster has GPUs, else one per `worker_cpus`
    CPUs; `num_workers` overrides the count.
    """

    def __init__(
        self,
        inner_spec: BackendSpec,
        *,
        address: str | None = None,
        num_workers: int | None = None,
        worker_cpus: float = 1.0,
        max_attempts: int = 3,
        poll_s: float = 0.2,
        startup_timeout_s: float = 300.0,
    ) -> None:
        ray = _ray()
        connect(address)
        spec = worker_config(inner_spec) if isinstance(inner_spec, Config) else inner_spec
        # resolve() runs here; it reads model_index.json at most, never weights, so any device will do
        self._local = _build(
            with_overrides(spec, device="cpu", dtype="", cpu_offload=False)
            if isinstance(spec, Config) and spec.backend == "diffusers"
            else spec
        )
        self.name, self.model = self._local.name, self._local.model
        self.supports_continuity = self._local.supports_continuity
        self.variant = getattr(self._local, "variant", None)  # the weights variant is in the clip key, as locally
        # LoRAs and tiers are resolved and checked here, as keys are (the files travel as paths, like keyframes)
        self.supports_loras = getattr(self._local, "supports_loras", False)
        for name in ("check_lora", "tier_label"):
            if hasattr(self._local, name):
                setattr(self, name, getattr(self._local, name))
        gpus = int(ray.cluster_resources().get("GPU", 0))
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.uses_gpu = gpus > 0
        n = num_workers or (gpus if gpus else max(1, int(cpus / worker_cpus)))
        resources = {"num_gpus": 1, "num_cpus": worker_cpus} if gpus else {"num_cpus": worker_cpus}
        actor_cls = ray.remote(concurrency_groups={_CONTROL: 2})(RenderWorker)  # pyright: ignore[reportCallIssue] -- ray.remote's typed overloads omit concurrency_groups, which Ray documents (and refuses in .options())
        self.actors: list[_RenderActor] = [
            actor_cls.options(max_restarts=max_attempts, max_task_retries=0, **resources).remote(spec) for _ in range(n)
        ]
        try:
            described = ray.get([a.describe.remote() for a in self.actors], timeout=startup_timeout_s)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise ClusterError(
                f"{n} render workers ({'1 GPU' if gpus else '1 CPU'} each) did not all start within "
                f"{startup_timeout_s:.0f} s: the cluster has {gpus} GPUs, {cpus} CPUs"
            ) from None
        except Exception as e:
            self.close()
            raise ClusterError(f"render workers failed to start: {str(_cause(e)).splitlines()[0]}") from None
        self.max_parallel = n
        self.max_attempts, self.poll_s, self.startup_timeout_s = max_attempts, poll_s, startup_timeout_s
        self.label = f"{described[0]['label']} · on Ray ({n} worker{'s' if n != 1 else ''}: {'GPU' if gpus else 'CPU'})"
        self._idle: queue.Queue[_RenderActor] = queue.Queue()
        for a in self.actors:
            self._idle.put(a)
        self._flights: dict[str, _Flight] = {}
        self._lock = threading.Lock()
        self._restarting: set[_RenderActor] = set()  # died under a shot: Ray is bringing them back

    # -- the Backend protocol --------------------------------------------------------------

    def resolve(self, request: ShotRequest) -> ShotRequest:
        return self._local.resolve(request)

    def render(
        self, request: ShotRequest, out: Path, progress: Progress | None = None, cancel: CancelToken | None = None
    ) -> ClipInfo:
        ray = _ray()
        cancel = cancel or CancelToken()
        req = self.resolve(request)
        key = clip_key(self, req)
        while True:
            cancel.raise_if_cancelled()
            with self._lock:
                running = self._flights.get(key)
                if running is None:
                    flight = self._flights[key] = _Flight()
            if running is None:
                try:
                    ref = flight.ref = self._run(req, progress, cancel)
                except BaseException as e:
                    flight.error = e
                    raise
                finally:
                    with self._lock:
                        del self._flights[key]
                    flight.done.set()
                break
            while not running.done.wait(self.poll_s):  # the same clip is being rendered: wait for it
                cancel.raise_if_cancelled()
            if running.ref is not None:
                ref = running.ref
                break
            assert running.error is not None  # a flight is done with its result or its error
            if not isinstance(running.error, Cancelled):
                raise running.error  # the same request would fail the same way
            # the other request was stopped, this one was not: render it ourselves
        result = ray.get(ref)
        Path(out).write_bytes(result["data"])
        return ClipInfo(
            path=Path(out),
            num_frames=result["num_frames"],
            fps=result["fps"],
            width=result["width"],
            height=result["height"],
        )

    # -- the pool --------------------------------------------------------------------------

    def _run(self, req: ShotRequest, progress: Progress | None, cancel: CancelToken) -> ObjectRef[_Rendered]:
        """Render on a free worker, resubmitting after a worker death; the ObjectRef of the result."""
        ray = _ray()
        init = Path(req.init_image).read_bytes() if req.init_image else None
        for attempt in range(1, self.max_attempts + 1):
            actor = self._acquire(cancel)
            try:
                ref = actor.render.remote(req, init)
                self._wait(actor, ref, progress, cancel)
                return ref
            except ray.exceptions.RayActorError:
                with self._lock:
                    self._restarting.add(actor)
                if attempt == self.max_attempts:
                    raise RenderError(
                        f"shot {req.shot_id}: its render worker died {attempt} times (out of memory? see the Ray logs)"
                    ) from None
            finally:
                self._idle.put(actor)  # a dead one is being restarted by Ray; it goes to the back
        raise AssertionError("unreachable")

    def _acquire(self, cancel: CancelToken) -> _RenderActor:
        """A free worker that answers. One that died under a shot is asked first whether Ray has brought it back: a
        shot sent to it while it restarts fails without waiting for it ("unavailable"), which is no death of that
        shot (seen on the loaded CI machine: both retries went to the restarting worker within 4 s, the other being
        busy, and the shot was given up as "died 3 times"). One still restarting goes to the back of the queue, so
        another free worker is taken."""
        ray = _ray()
        deadline: float | None = None  # set when a worker is first found restarting (busy ones may take long)
        while True:
            cancel.raise_if_cancelled()
            try:
                actor = self._idle.get(timeout=self.poll_s)
            except queue.Empty:
                continue
            with self._lock:
                suspect = actor in self._restarting
            if not suspect:
                return actor
            deadline = deadline or time.monotonic() + self.startup_timeout_s
            ping = actor.stats.options(concurrency_group=_CONTROL).remote()
            while not ray.wait([ping], timeout=self.poll_s)[0] and time.monotonic() < deadline:
                cancel.raise_if_cancelled()  # (a call to a restarting worker may also wait for it to be back)
            try:
                ray.get(ping, timeout=0)
            except (ray.exceptions.ActorUnavailableError, ray.exceptions.GetTimeoutError):  # restarting: not yet
                self._idle.put(actor)
                if time.monotonic() > deadline:
                    raise RenderError(
                        f"no render worker came back within {self.startup_timeout_s:.0f} s of dying (see the Ray logs)"
                    ) from None
                time.sleep(self.poll_s)
                continue
            except ray.exceptions.RayActorError:
                pass  # gone for good (its restarts spent): the shot's attempt finds that out and counts it
            with self._lock:
                self._restarting.discard(actor)
            return actor

    def _wait(
        self, actor: _RenderActor, ref: ObjectRef[_Rendered], progress: Progress | None, cancel: CancelToken
    ) -> None:
        """Wait for a render, relaying step progress and stop requests; raise what the worker raised."""
        ray = _ray()
        last: tuple[int, ...] | None = None
        poll: ObjectRef[tuple[int, int]] | None = None
        while True:
            ready, _ = ray.wait([ref], timeout=self.poll_s)
            if ready:
                break
            if cancel.cancelled:
                ray.cancel(ref)  # drops it if not started yet
                actor.stop.options(concurrency_group=_CONTROL).remote()  # else the backend stops at its next step
            elif progress is not None:
                if poll is not None and ray.wait([poll], timeout=0)[0]:
                    try:
                        step = tuple(ray.get(poll))
                    except ray.exceptions.RayError:
                        step = None
                    if step and step != last and step[1]:
                        last = step
                        progress(*step)
                    poll = None
                if poll is None:
                    poll = actor.progress.options(concurrency_group=_CONTROL).remote()
        try:
            ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            raise Cancelled("render cancelled") from None
        except ray.exceptions.RayTaskError as e:
            cause = _cause(e)
            if isinstance(cause, (RenderError, Cancelled)):
                raise cause from None
            raise RenderError(f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}") from None

    # -- housekeeping ----------------------------------------------------------------------

    def stats(self) -> list[_Stats]:
        """Per worker: renders done since it (re)started, and its process id."""
        ray = _ray()
        return ray.get([a.stats.options(concurrency_group=_CONTROL).remote() for a in self.actors])

    def close(self) -> None:
        """Stop the workers (they also stop when the coordinating process exits)."""
        ray = _ray()
        for a in self.actors:
            ray.kill(a, no_restart=True)


# ---------------------------------------------------------------------------------------- agents

_WORKER_AGENTS: dict[Config, AgentSet] = {}


class Secret:
    """The API key on its way to a worker: its repr never shows it (in a traceback, a log, a dump)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "Secret(***)" if self.value else "Secret('')"


def _agent_call(
    config: Config, api_key: Secret, role: str, method: str, args: tuple, frames: list | None, ctx: RunContext
) -> Result[Any]:
    """Runs on a worker: the role built from the config (kept per process), called with `args` and `ctx`.

    A critic's frames arrive as bytes and are written to a temp folder, since the coordinator's
    paths mean nothing here.
    """
    cfg = with_overrides(config, api_key=api_key.value)
    if cfg not in _WORKER_AGENTS:
        from app.factory import make_agents

        _WORKER_AGENTS[cfg] = make_agents(cfg)
    target = getattr(_WORKER_AGENTS[cfg], role)
    if frames is None:
        return getattr(target, method)(*args, ctx)
    from agents.base import SampledFrame

    persona, film = args
    with tempfile.TemporaryDirectory(prefix="chief-ray-frames-") as tmp:
        local = []
        for i, (frame, data) in enumerate(frames):
            path = Path(tmp) / f"{i:05d}{Path(frame.path).suffix}"
            path.write_bytes(data)
            local.append(SampledFrame(shot_id=frame.shot_id, index=frame.index, time=frame.time, path=str(path)))
        return getattr(target, method)(persona, replace(film, frames=local), ctx)


class AgentWorker:
    """One Ray actor running agent calls, several at once (a panel's critics), each in its own thread.

    The run contract crosses the process boundary here: each call gets its own CancelToken, set by `stop(call)`, and
    its own list of progress events, drained by `events(call)`; both run in the control group, beside the calls. A
    call returns its result with the events not drained yet, so none is lost."""

    def __init__(self) -> None:
        self._calls: dict[str, tuple[CancelToken, list[ProgressEvent]]] = {}
        self._stopped: set[str] = set()  # stop requests that came before their call started
        self._lock = threading.Lock()

    def call(
        self,
        call_id: str,
        config: Config,
        api_key: Secret,
        role: str,
        method: str,
        args: tuple,
        frames: list | None,
        run: tuple,
    ) -> tuple[Result[Any], list[ProgressEvent]]:
        """`run` is the coordinator's RunContext without what cannot travel: (scope, seconds left or None)."""
        scope, seconds = run
        token, events = CancelToken(), list[ProgressEvent]()
        with self._lock:
            self._calls[call_id] = (token, events)
            if call_id in self._stopped:
                token.cancel()

        def progress(e: ProgressEvent) -> None:
            with self._lock:
                events.append(e)

        deadline = None if seconds is None else time.monotonic() + seconds  # this machine's clock
        ctx = RunContext(cancel=token, progress=progress, scope=scope, deadline=deadline)
        try:
            value = _agent_call(config, api_key, role, method, args, frames, ctx)
        finally:
            with self._lock:
                self._calls.pop(call_id, None)
                self._stopped.discard(call_id)
        return value, list(events)

    def events(self, call_id: str) -> list[ProgressEvent]:
        with self._lock:
            _, events = self._calls.get(call_id, (None, []))
            out = list(events)
            events.clear()
        return out

    def stop(self, call_id: str) -> None:
        with self._lock:
            if call_id in self._calls:
                self._calls[call_id][0].cancel()
            else:
                self._stopped.add(call_id)


if TYPE_CHECKING:

    class _AgentActor(ActorHandle[AgentWorker]):
        """An AgentWorker's handle: the methods the coordinator calls on it."""

        call: _Remote[
            [str, Config, Secret, str, str, tuple, list | None, tuple], tuple[Result[Any], list[ProgressEvent]]
        ]
        events: _Remote[[str], list[ProgressEvent]]
        stop: _Remote[[str], None]


def keys_may_travel() -> bool:
    """True when every node of the cluster is this machine, or Ray's TLS is on: only then does the API
    key go to workers (inside task arguments, in memory). Otherwise LLM calls stay in the coordinator."""
    ray = _ray()
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return True
    if ray.util.client.ray.is_connected():  # ray:// — this process is not on the cluster at all
        return False
    here = ray.get_runtime_context().get_node_id()
    return all(n["NodeID"] == here for n in ray.nodes() if n["Alive"])


class _RemoteRole:
    def __init__(self, owner: RayAgents, role: str, inner: Planner | Critic | Refiner) -> None:
        self._owner, self._role, self.mode = owner, role, inner.mode

    def _call(self, method: str, args: tuple, ctx: RunContext | None, frames: list | None = None) -> Result[Any]:
        """Run `method` on a worker, relaying `ctx`: its progress events come back, its Stop goes there."""
        ray = _ray()
        o, ctx = self._owner, ctx or RunContext()
        ctx.cancel.raise_if_cancelled(f"{self._role}: cancelled")
        actor, call_id = o._worker(), uuid.uuid4().hex
        run = (ctx.scope, ctx.remaining())
        ref = actor.call.options(concurrency_group=_CALLS).remote(
            call_id, o._config, o._key, self._role, method, args, frames, run
        )
        poll: ObjectRef[list[ProgressEvent]] | None = None
        stopped = False
        while not ray.wait([ref], timeout=o.poll_s)[0]:
            if ctx.cancel.cancelled and not stopped:
                actor.stop.options(concurrency_group=_CONTROL).remote(call_id)  # the role raises Cancelled there
                stopped = True
            if poll is not None and ray.wait([poll], timeout=0)[0]:
                self._relay(ray.get(poll), ctx)
                poll = None
            if poll is None:
                poll = actor.events.options(concurrency_group=_CONTROL).remote(call_id)
        try:
            value, rest = ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            raise _cause(e) from None
        except ray.exceptions.RayActorError:  # Ray restarts it for the next call
            raise AgentError(
                f"{self._role}: its agent worker died mid-call (out of memory? see the Ray logs)"
            ) from None
        if poll is not None:
            self._relay(ray.get(poll), ctx)  # drained before the call ended: these came first
        self._relay(rest, ctx)
        return value

    @staticmethod
    def _relay(events: list[ProgressEvent], ctx: RunContext) -> None:
        for e in events:
            ctx.progress(e)


class RemotePlanner(_RemoteRole):
    def plan(self, idea: str, minutes: float, ctx: RunContext | None = None) -> Result[Storyboard]:
        return self._call("plan", (idea, minutes), ctx)


class RemoteCritic(_RemoteRole):
    def critique(self, persona: Persona, film: FilmView, ctx: RunContext | None = None) -> Result[Critique]:
        frames = [(f, Path(f.path).read_bytes()) for f in film.frames]
        return self._call("critique", (persona, replace(film, frames=[])), ctx, frames=frames)


class RemoteRefiner(_RemoteRole):
    def refine(
        self, storyboard: Storyboard, notes: list[Note], critiques: list[Critique], ctx: RunContext | None = None
    ) -> Result[Proposal]:
        return self._call("refine", (storyboard, notes, critiques), ctx)


class RayAgents:
    """The agents bundle of app/factory.py, with each planner/critic/refiner call run as a Ray task.

    Offline roles always run on workers. LLM roles run on workers only when `keys_may_travel()`
    (the key is passed in memory as a task argument); otherwise they stay in this process.
    """

    def __init__(
        self, config: Config, *, address: str | None = None, num_workers: int | None = None, poll_s: float = 0.1
    ) -> None:
        from app.factory import make_agents

        ray = _ray()
        connect(address)
        local = make_agents(config)
        llm = config.agent_mode == "llm"
        remote = not llm or keys_may_travel()
        self._config, self._key = worker_config(config), Secret(config.api_key if (llm and remote) else "")
        # light work (HTTP, a few frames): never waits on renders; one worker per CPU of the cluster, up to 4
        self._num_workers = num_workers or max(1, min(4, int(ray.cluster_resources().get("CPU", 1))))
        self._workers: list[_AgentActor] = []
        self._next = 0
        self._lock = threading.Lock()
        self.poll_s = poll_s
        self.planner: Planner
        self.critic: Critic
        self.refiner: Refiner
        if remote:
            self.planner = RemotePlanner(self, "planner", local.planner)
            self.critic = RemoteCritic(self, "critic", local.critic)
            self.refiner = RemoteRefiner(self, "refiner", local.refiner)
            self.label = f"{local.label} · calls on Ray"
        else:
            self.planner, self.critic, self.refiner = local.planner, local.critic, local.refiner
            self.label = f"{local.label} · calls in the coordinator (the key does not cross an unencrypted cluster)"

    def _worker(self) -> _AgentActor:
        """The next agent worker, round robin (started on first use)."""
        ray = _ray()
        with self._lock:
            if not self._workers:
                actor_cls = ray.remote(  # pyright: ignore[reportCallIssue] -- ray.remote's typed overloads omit concurrency_groups, which Ray documents (and refuses in .options())
                    num_cpus=0, max_restarts=-1, concurrency_groups={_CALLS: _CALLS_PER_WORKER, _CONTROL: 2}
                )(AgentWorker)
                self._workers = [actor_cls.remote() for _ in range(self._num_workers)]
            self._next = (self._next + 1) % len(self._workers)
            return self._workers[self._next]

    def close(self) -> None:
        """Stop the agent workers (they also stop when this object or the coordinating process goes)."""
        ray = _ray()
        with self._lock:
            for a in self._workers:
                ray.kill(a, no_restart=True)
            self._workers = []


# ---------------------------------------------------------------------------------------- wiring


def cluster_studio(config: Config, address: str | None = None, num_workers: int | None = None) -> Studio:
    """A Studio whose renders and agent calls run on the Ray cluster at `address` (None: a local one)."""
    from app.studio import Studio

    connect(address)
    return Studio(config, backend=RayBackend(config, num_workers=num_workers), agents=RayAgents(config))
