"""remem: the memory engine for LLM agents, from Python.

A thin binding over libremem.so with ctypes and nothing outside the standard
library, so that it drops into any agent codebase. The C structures of
include/remem.h are mirrored field for field below (tests/e2e/python_binding.sh
checks every offset against the C compiler), and the C init functions fill
them, so the "use the profile's value" sentinels (NaN, -1) are the library's
own. Results are copied into dataclasses before the C result is freed: nothing
returned here points into C memory.

    import remem
    with remem.connect("agent.db") as db:
        db.add("agent:bolton", "The user prefers tea over coffee", importance=0.6)
        for hit in db.recall("what does the user drink?", ns="agent:bolton"):
            print(f"{hit.score:.3f} {hit.text}  (relevance {hit.relevance:.2f})")

Errors raise RememError (or its subclass for the status: NotFoundError,
FilterError, ...; one per REMEM_E* code) carrying the status name and
remem's own message.

remem.connect() opens a store; remem.open is the same function (the name of
remem_open), kept as an attribute but left out of __all__ so that
`from remem import *` does not shadow the builtin open().

Every operation of the library (remem.operations()) is a method of Remem
with named keyword parameters (db.decision_add(ns=..., title=...)),
generated into remem/_ops.py from the library's table.

The library is found through $REMEM_LIB, then build/libremem.so of the
source checkout this package sits in, then the system's library path
(ctypes.util.find_library, then the usual lib folders: make install puts it
in /usr/local/lib).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime as _dt
import json
import math
import os
import threading
from ctypes import (POINTER, Structure, byref, c_char_p, c_double, c_float,
                    c_int, c_int64, c_long, c_size_t, c_uint, c_void_p)
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence, Union

from ._ops import OperationMethods

__version__ = "0.1.0"  # follows REMEM_VERSION in include/remem.h

__all__ = [
    "connect", "Remem", "Memory", "Hit", "RecallResult", "profiles", "profile",
    "now", "RememError", "InvalidArgumentError", "NotFoundError",
    "FilterError", "ProfileError", "DimensionError", "ModelMismatchError",
    "EmbedderError", "StoreError", "BusyError", "ParseError", "AmbiguousError",
    "CorruptError", "UnsupportedError", "OutOfMemoryError", "RememIOError",
    "LLMError", "DeadlineError", "operations",
]

# --------------------------------------------------------------------------
# Finding and describing the library
# --------------------------------------------------------------------------


def _find_library() -> str:
    env = os.environ.get("REMEM_LIB")
    if env:
        return env
    # A source checkout: bindings/python/remem/ sits two folders below the
    # repository, whose build/ holds the library `make` built.
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (2, 3):
        local = os.path.normpath(os.path.join(here, *[".."] * up, "build", "libremem.so"))
        if os.path.exists(local):
            return local
    found = ctypes.util.find_library("remem")
    if found:
        return found
    for d in ("/usr/local/lib", "/usr/lib", "/usr/local/lib64", "/usr/lib64",
              "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"):
        for n in ("libremem.so", "libremem.so.0"):
            if os.path.exists(os.path.join(d, n)):
                return os.path.join(d, n)
    raise OSError(
        "libremem.so not found: build it (make), install it (make install), "
        "or set REMEM_LIB to its path")


_lib = ctypes.CDLL(_find_library())


class _Options(Structure):
    _fields_ = [
        ("size", c_size_t),  # set by the init function (remem.h, STRUCT SIZES)
        ("embedder", c_char_p),
        ("embed_url", c_char_p),
        ("embed_model", c_char_p),
        ("embed_api_key", c_char_p),
        ("embed_timeout_ms", c_int),
        ("embed_retries", c_int),
        ("embed_batch", c_int),
        ("model_dir", c_char_p),
        ("durability", c_int),
        ("busy_timeout_ms", c_int),
        ("read_only", c_int),
        ("config_path", c_char_p),
        ("no_memory", c_int),
        ("llm_url", c_char_p),
        ("llm_model", c_char_p),
        ("llm_api_key", c_char_p),
        ("llm_timeout_ms", c_int),
        ("cache_mb", c_int),
    ]


class _Memory(Structure):
    _fields_ = [
        ("size", c_size_t),  # set by the init function (remem.h, STRUCT SIZES)
        ("ns", c_char_p),
        ("id", c_char_p),
        ("kind", c_char_p),
        ("tier", c_char_p),
        ("text", c_char_p),
        ("importance", c_double),
        ("created_at", c_int64),
        ("updated_at", c_int64),
        ("accessed_at", c_int64),
        ("access_count", c_int64),
        ("expires_at", c_int64),
        ("invalidated_at", c_int64),
        ("superseded_by", c_char_p),
        ("duplicate_count", c_int64),
        ("metadata", c_char_p),
        ("links", c_char_p),
        ("model", c_char_p),
        ("vector", POINTER(c_float)),
        ("dim", c_int),
    ]


class _Patch(Structure):
    _fields_ = [
        ("size", c_size_t),  # set by the init function (remem.h, STRUCT SIZES)
        ("fields", c_uint),
        ("text", c_char_p),
        ("kind", c_char_p),
        ("tier", c_char_p),
        ("metadata", c_char_p),
        ("links", c_char_p),
        ("importance", c_double),
        ("expires_at", c_int64),
        ("actor", c_char_p),
    ]


class _Query(Structure):
    _fields_ = [
        ("size", c_size_t),  # set by the init function (remem.h, STRUCT SIZES)
        ("text", c_char_p),
        ("vector", POINTER(c_float)),
        ("dim", c_int),
        ("namespaces", POINTER(c_char_p)),
        ("n_namespaces", c_size_t),
        ("filter", c_char_p),
        ("profile", c_char_p),
        ("k", c_int),
        ("w_relevance", c_double),
        ("w_lexical", c_double),
        ("w_recency", c_double),
        ("w_importance", c_double),
        ("min_similarity", c_double),
        ("min_score", c_double),
        ("recency_base", c_double),
        ("half_life_hours", c_double),
        ("normalize", c_int),
        ("candidates", c_int),
        ("tiers", c_char_p),
        ("now", c_int64),
        ("no_touch", c_int),
        ("include_invalid", c_int),
        ("w_context", c_double),
    ]


class _Hit(Structure):
    _fields_ = [
        ("mem", _Memory),
        ("score", c_double),
        ("relevance", c_double),
        ("similarity", c_double),
        ("lexical", c_double),
        ("bm25", c_double),
        ("recency", c_double),
        ("importance", c_double),
        ("lanes", c_uint),
        ("context", c_double),
    ]


class _Result(Structure):
    _fields_ = [
        ("n", c_size_t),
        ("hits", POINTER(_Hit)),
        ("profile", c_char_p),
        ("now", c_int64),
        ("candidates", c_size_t),
        ("took_ms", c_double),
        ("memory_off", c_int),
        ("entity", POINTER(c_double)),
    ]


# The structures by their C names, for the layout check in the tests.
_STRUCTS = {
    "remem_options": _Options, "remem_memory": _Memory, "remem_patch": _Patch,
    "remem_query": _Query, "remem_hit": _Hit, "remem_result": _Result,
}

_SET_TEXT, _SET_KIND, _SET_TIER, _SET_IMPORTANCE = 1, 2, 4, 8
_SET_METADATA, _SET_EXPIRES, _SET_LINKS = 16, 32, 64
_OUTCOMES = {1: "added", 2: "upserted", 3: "duplicate", 4: "dropped"}
_ID_CAP = 128


def _declare(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_H = c_void_p  # remem * and the other opaque handles


class _OpInfo(Structure):
    _fields_ = [("name", c_char_p), ("right", c_char_p), ("summary", c_char_p),
                ("schema", c_char_p), ("hints", c_uint), ("group", c_char_p)]

_status_name = _declare("remem_status_name", c_char_p, c_int)
_strerror = _declare("remem_strerror", c_char_p, c_int)
# The init functions are macros in C that pass the caller's sizeof (remem.h,
# STRUCT SIZES); here the real functions get ctypes' size of the mirror.
_options_init_ = _declare("remem_options_init_", None, POINTER(_Options), c_size_t)
_memory_init_ = _declare("remem_memory_init_", None, POINTER(_Memory), c_size_t)
_patch_init_ = _declare("remem_patch_init_", None, POINTER(_Patch), c_size_t)
_query_init_ = _declare("remem_query_init_", None, POINTER(_Query), c_size_t)


def _options_init(p): _options_init_(p, ctypes.sizeof(_Options))
def _memory_init(p): _memory_init_(p, ctypes.sizeof(_Memory))
def _patch_init(p): _patch_init_(p, ctypes.sizeof(_Patch))
def _query_init(p): _query_init_(p, ctypes.sizeof(_Query))
_open = _declare("remem_open", c_int, c_char_p, POINTER(_Options), POINTER(_H))
_close = _declare("remem_close", None, _H)
_errmsg = _declare("remem_errmsg", c_char_p, _H)
_embedder_name = _declare("remem_embedder_name", c_char_p, _H)
_embedder_model = _declare("remem_embedder_model", c_char_p, _H)
_embedder_dim = _declare("remem_embedder_dim", c_int, _H)
_embedder_note = _declare("remem_embedder_note", c_char_p, _H)
_record_memory = _declare("remem_record_memory", POINTER(_Memory), _H)
_record_free = _declare("remem_record_free", None, _H)
_add = _declare("remem_add", c_int, _H, POINTER(_Memory), c_char_p, c_size_t,
                POINTER(c_int))
_add_batch = _declare("remem_add_batch", c_int, _H, POINTER(_Memory), c_size_t,
                      c_char_p, c_size_t, POINTER(c_long))
_update = _declare("remem_update", c_int, _H, c_char_p, c_char_p, POINTER(_Patch))
_invalidate = _declare("remem_invalidate", c_int, _H, c_char_p, c_char_p,
                       c_char_p, c_char_p)
_forget = _declare("remem_forget", c_int, _H, c_char_p, c_char_p, c_int)
_get = _declare("remem_get", c_int, _H, c_char_p, c_char_p, POINTER(_H))
_recall = _declare("remem_recall", c_int, _H, POINTER(_Query), POINTER(POINTER(_Result)))
_result_free = _declare("remem_result_free", None, POINTER(_Result))
_profiles = _declare("remem_profiles", POINTER(c_char_p))
_profile_json = _declare("remem_profile_json", c_void_p, c_char_p)
_history = _declare("remem_history", c_int, _H, c_char_p, c_char_p, POINTER(c_void_p))
_stats = _declare("remem_stats", c_int, _H, c_char_p, POINTER(c_void_p))
_namespaces = _declare("remem_namespaces", c_int, _H, POINTER(c_void_p))
_clear = _declare("remem_clear", c_int, _H, c_char_p, POINTER(c_int64))
_embed = _declare("remem_embed", c_int, _H, POINTER(c_char_p), c_size_t, POINTER(c_float))
_parse_time = _declare("remem_parse_time", c_int, c_char_p, POINTER(c_int64))
_parse_time_field = _declare("remem_parse_time_field", c_int, c_char_p, c_char_p,
                             POINTER(c_int64), c_char_p, c_size_t)
_query_parse = _declare("remem_query_parse", c_int, c_char_p, c_size_t, POINTER(_H),
                        c_char_p, c_size_t)
_query_json_get = _declare("remem_query_json_get", POINTER(_Query), _H)
_query_json_free = _declare("remem_query_json_free", None, _H)
_now = _declare("remem_now", c_int64)
_free = _declare("remem_free", None, c_void_p)

# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class RememError(Exception):
    """A failed remem call. code is the REMEM_E* status (negative int), name
    its name ("REMEM_EFILTER"), message remem's detail of what went wrong."""

    def __init__(self, code: int, message: str):
        self.code = code
        self.name = _str(_status_name(code)) or "REMEM_UNKNOWN"
        self.message = message
        super().__init__(f"{message} [{self.name}]")


class InvalidArgumentError(RememError, ValueError): pass
class NotFoundError(RememError, KeyError):
    def __str__(self):  # KeyError would quote the message
        return RememError.__str__(self)
class FilterError(RememError, ValueError): pass
class ProfileError(RememError, ValueError): pass
class DimensionError(RememError, ValueError): pass
class ModelMismatchError(RememError): pass
class EmbedderError(RememError): pass
class StoreError(RememError): pass
class BusyError(RememError): pass
class ParseError(RememError, ValueError): pass
class AmbiguousError(RememError, LookupError): pass
class CorruptError(RememError): pass
class UnsupportedError(RememError): pass
class OutOfMemoryError(RememError, MemoryError): pass
class RememIOError(RememError, OSError):
    def __str__(self):  # OSError would format its own
        return RememError.__str__(self)
class LLMError(RememError): pass
class DeadlineError(RememError, TimeoutError):  # REMEM_ETIMEOUT: remem_set_deadline, a cut call
    def __str__(self):
        return RememError.__str__(self)


_ERRORS = {
    -1: InvalidArgumentError, -2: NotFoundError, -3: FilterError,
    -4: ProfileError, -5: DimensionError, -6: ModelMismatchError,
    -7: EmbedderError, -8: StoreError, -9: BusyError, -10: OutOfMemoryError,
    -11: RememIOError, -12: ParseError, -13: AmbiguousError, -14: CorruptError,
    -15: UnsupportedError, -16: LLMError, -17: DeadlineError,
}


def _error(code: int, message: str) -> Exception:
    if not message:
        message = _str(_strerror(code)) or "unknown error"
    return _ERRORS.get(code, RememError)(code, message)


# --------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------


def _b(s: Optional[str], name: str = "argument") -> Optional[bytes]:
    """A str as the NUL-terminated UTF-8 the C library takes. Anything else
    is refused rather than converted: bytes would become "b'...'", an int
    "5", and a NUL would silently cut the string short in C."""
    if s is None:
        return None
    if not isinstance(s, str):
        raise TypeError(f"{name}: must be a str, not {type(s).__name__}")
    if "\0" in s:
        raise ValueError(f"{name}: contains a NUL character (\\x00), which remem cannot store")
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{name}: not encodable as UTF-8 ({e.reason} at index {e.start})") from None


def _str(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def _json_text(v: Any, name: str = "argument") -> Optional[bytes]:
    """A dict/list as JSON text; a str is taken to be JSON text already."""
    if v is None:
        return None
    if isinstance(v, str):
        return _b(v, name)
    if isinstance(v, (bytes, bytearray)):
        raise TypeError(f"{name}: must be a dict, a list or JSON text (str), not bytes")
    try:
        return json.dumps(v, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise type(e)(f"{name}: not representable as JSON ({e})") from None


TimeLike = Union[int, float, str, _dt.datetime, None]


def _ms(t: TimeLike, name: str = "time") -> int:
    """Milliseconds since the epoch from an int (ms), a datetime (naive =
    UTC), or a string remem parses (ISO 8601, "now", digits)."""
    if t is None:
        return 0
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        return int(round(t.timestamp() * 1000))
    if isinstance(t, bool) or not isinstance(t, (int, float, str)):
        raise TypeError(f"{name}: must be milliseconds, a datetime or an ISO 8601 str, "
                        f"not {type(t).__name__}")
    if isinstance(t, (int, float)):
        if not math.isfinite(t) or not -2**63 <= t < 2**63:
            raise ValueError(f"{name}: {t!r} is out of range")
        return int(t)
    out = c_int64()
    err = ctypes.create_string_buffer(512)
    rc = _parse_time_field(_b(name), _b(t, name), byref(out), err, len(err))
    if rc != 0:
        raise ParseError(rc, _str(err.value))
    return out.value


def _number(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name}: must be a number, not {type(v).__name__}")
    return float(v)


def _vector(v: Optional[Sequence[float]], name: str = "vector"):
    if v is None:
        return None, 0
    vals = [_number(x, f"{name}[{i}]") for i, x in enumerate(v)]
    arr = (c_float * len(vals))(*vals)
    return arr, len(vals)


def _take_json(p: c_void_p) -> Any:
    """Parse and free a JSON text malloc'd by remem."""
    if not p.value:
        return None
    try:
        return json.loads(ctypes.string_at(p.value).decode("utf-8"))
    finally:
        _free(p)


def _loads_or_text(s: Optional[str]) -> Any:
    if s is None:
        return None
    try:
        return json.loads(s)
    except ValueError:
        return s


_ops = _declare("remem_ops", POINTER(_OpInfo), POINTER(c_size_t))
_call = _declare("remem_call", c_int, _H, c_char_p, c_char_p, c_size_t, POINTER(c_void_p))


def operations() -> list:
    """The library's operations (remem_ops()): dicts with name, right,
    summary and schema (the JSON Schema of the arguments). Each is
    Remem.call(name, **args), or a method named like it with '.' as '_'
    (db.decision_add(...) is db.call("decision.add", ...))."""
    n = c_size_t()
    p = _ops(byref(n))
    return [{"name": _str(p[i].name), "right": _str(p[i].right),
             "summary": _str(p[i].summary), "schema": json.loads(_str(p[i].schema))}
            for i in range(n.value)]


_OP_METHODS = {o["name"].replace(".", "_"): o["name"] for o in operations()}


def profiles() -> list:
    """The names of the built-in scoring profiles."""
    names, p, i = [], _profiles(), 0
    while p[i] is not None:
        names.append(_str(p[i]))
        i += 1
    return names


def profile(name: str) -> dict:
    """The definition of a profile (weights, decay, thresholds)."""
    p = c_void_p(_profile_json(_b(name, "name")))
    if not p.value:
        raise ProfileError(-4, f"unknown profile {name!r}; known: {', '.join(profiles())}")
    return _take_json(p)


# --------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """One memory record. Times are milliseconds since the epoch (UTC), 0
    when unset; metadata is a dict and links a list of ids (or None)."""
    id: str
    ns: str
    text: str
    kind: str = "observation"
    tier: str = "short"
    importance: float = 0.0
    created_at: int = 0
    updated_at: int = 0
    accessed_at: int = 0
    access_count: int = 0
    expires_at: int = 0
    invalidated_at: int = 0
    superseded_by: Optional[str] = None
    duplicate_count: int = 0
    metadata: Optional[dict] = None
    links: Optional[list] = None
    model: Optional[str] = None

    @property
    def created(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.created_at / 1000, _dt.timezone.utc)

    @property
    def valid(self) -> bool:
        return self.invalidated_at == 0

    @classmethod
    def _from_c(cls, m: _Memory) -> "Memory":
        return cls(
            id=_str(m.id), ns=_str(m.ns), text=_str(m.text) or "",
            kind=_str(m.kind), tier=_str(m.tier), importance=m.importance,
            created_at=m.created_at, updated_at=m.updated_at,
            accessed_at=m.accessed_at, access_count=m.access_count,
            expires_at=m.expires_at, invalidated_at=m.invalidated_at,
            superseded_by=_str(m.superseded_by),
            duplicate_count=m.duplicate_count,
            metadata=_loads_or_text(_str(m.metadata)),
            links=_loads_or_text(_str(m.links)), model=_str(m.model))


@dataclass(frozen=True)
class Hit:
    """One ranked recall result: the memory and every component of its
    score. similarity is None when no vector similarity was computed;
    lanes names how it was found ("vector", "lexical", "entity",
    "neighbour"); context is the best
    base score of the memories written just before and after it (0 if none
    was a candidate); entity is the entity lane's component in [0, 1] (0
    when the profile has no entity lane)."""
    memory: Memory
    score: float
    relevance: float
    similarity: Optional[float]
    lexical: float
    bm25: float
    recency: float
    importance: float
    lanes: tuple = ()
    context: float = 0.0
    entity: float = 0.0

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def ns(self) -> str:
        return self.memory.ns

    @property
    def text(self) -> str:
        return self.memory.text

    @classmethod
    def _from_c(cls, h: _Hit, entity: float = 0.0) -> "Hit":
        lanes = tuple(name for bit, name in ((1, "vector"), (2, "lexical"), (4, "entity"),
                                             (8, "neighbour")) if h.lanes & bit)
        return cls(memory=Memory._from_c(h.mem), score=h.score,
                   relevance=h.relevance,
                   similarity=None if math.isnan(h.similarity) else h.similarity,
                   lexical=h.lexical, bm25=h.bm25, recency=h.recency,
                   importance=h.importance, lanes=lanes, context=h.context,
                   entity=entity)


@dataclass(frozen=True)
class RecallResult:
    """The hits of a recall, best first (iterate, index or len() it), with
    the profile and time used, how many candidates were scored and how
    long it took."""
    hits: list
    profile: str
    now: int
    candidates: int
    took_ms: float
    memory: str = "on"  # "off" (memory off: no hits by choice) or "partly off"

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i):
        return self.hits[i]


# --------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------

_UNSET = object()


class Remem(OperationMethods):
    """An open store. Calls on one object are serialised by a lock (the C
    handle is for one thread at a time); for parallel work open one Remem
    per thread: they share the file safely, and ctypes releases the GIL
    during each call."""

    def __init__(self, path: str = "remem.db", *, embedder: Optional[str] = None,
                 embed_url: Optional[str] = None, embed_model: Optional[str] = None,
                 embed_api_key: Optional[str] = None, embed_timeout_ms: int = 0,
                 embed_retries: int = 0, embed_batch: int = 0,
                 model_dir: Optional[str] = None, durable: bool = False,
                 busy_timeout_ms: int = 0, read_only: bool = False,
                 config: Optional[str] = None, no_memory: bool = False,
                 llm_url: Optional[str] = None, llm_model: Optional[str] = None,
                 llm_api_key: Optional[str] = None, llm_timeout_ms: int = 0,
                 cache_mb: int = 0):
        """Open (creating if needed) the store at path (a file or
        ":memory:"). embedder: "hash", "http", "minilm" or None for auto.
        durable=True survives power loss too (synchronous=FULL). config:
        the configuration file (docs/config.md; None: $REMEM_CONFIG or
        remem.yaml beside the store). no_memory=True: memory off (recall
        finds nothing, writes are dropped), as the CLI's --no-memory.
        llm_url, llm_model, llm_api_key, llm_timeout_ms: the LLM that rating
        and consolidation ask (docs/llm.md; None: $REMEM_LLM_URL, ... or the
        config file's llm section). cache_mb: the byte budget, in MB, of
        the process's namespace caches, shared by every handle of the
        process (0: the config's cache.max_mb, else a quarter of physical
        memory; docs/deploy.md)."""
        self._lock = threading.Lock()
        self._h = None
        opt = _Options()
        _options_init(byref(opt))
        opt.embedder = _b(embedder, "embedder")
        opt.embed_url = _b(embed_url, "embed_url")
        opt.embed_model = _b(embed_model, "embed_model")
        opt.embed_api_key = _b(embed_api_key, "embed_api_key")
        opt.embed_timeout_ms = embed_timeout_ms
        opt.embed_retries = embed_retries
        opt.embed_batch = embed_batch
        opt.model_dir = _b(model_dir, "model_dir")
        opt.durability = 1 if durable else 0
        opt.busy_timeout_ms = busy_timeout_ms
        opt.read_only = 1 if read_only else 0
        opt.config_path = _b(config, "config")
        opt.no_memory = 1 if no_memory else 0
        opt.llm_url = _b(llm_url, "llm_url")
        opt.llm_model = _b(llm_model, "llm_model")
        opt.llm_api_key = _b(llm_api_key, "llm_api_key")
        opt.llm_timeout_ms = llm_timeout_ms
        opt.cache_mb = cache_mb
        h = _H()
        rc = _open(_b(os.fspath(path), "path"), byref(opt), byref(h))
        if rc != 0:
            msg = _str(_errmsg(h)) if h.value else "out of memory"
            _close(h)
            raise _error(rc, f"open {path}: {msg}")
        self._h = h
        self.path = os.fspath(path)

    # -- lifecycle ---------------------------------------------------------
    def close(self) -> None:
        """Close the store. Safe to call twice."""
        with self._lock:
            if self._h is not None:
                _close(self._h)
                self._h = None

    def __enter__(self) -> "Remem":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None:
            _close(h)
            self._h = None

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"embedder {self.embedder_name}"
        return f"<remem.Remem {self.path!r} {state}>"

    def _handle(self):
        if self._h is None:
            raise InvalidArgumentError(-1, "the store is closed")
        return self._h

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            msg = _str(_errmsg(self._h)) or ""
            # an operation's message already names it ("decision.add: ...")
            if not msg.startswith(what + ":"):
                msg = f"{what}: {msg}".rstrip(": ")
            raise _error(rc, msg)

    # -- the embedder ------------------------------------------------------
    @property
    def embedder_name(self) -> str:
        return _str(_embedder_name(self._handle()))

    @property
    def embedder_model(self) -> str:
        return _str(_embedder_model(self._handle()))

    @property
    def embedder_dim(self) -> int:
        return _embedder_dim(self._handle())

    @property
    def embedder_note(self) -> str:
        return _str(_embedder_note(self._handle())) or ""

    def embed(self, texts: Sequence[str]) -> list:
        """Embed texts with the store's embedder: one list of floats each."""
        texts = list(texts)
        with self._lock:
            h = self._handle()
            dim = _embedder_dim(h)
            arr = (c_char_p * len(texts))(*[_b(t, f"texts[{i}]") for i, t in enumerate(texts)])
            out = (c_float * (dim * len(texts)))()
            self._check(_embed(h, arr, len(texts), out), "embed")
        return [list(out[i * dim:(i + 1) * dim]) for i in range(len(texts))]

    # -- writing -----------------------------------------------------------
    @staticmethod
    def _fill(m: _Memory, keep: list, ns, text, id=None, kind=None, tier=None,
              importance=None, metadata=None, links=None, created_at=None,
              expires_at=None, vector=None) -> None:
        _memory_init(byref(m))
        m.ns, m.text = _b(ns, "ns"), _b(text, "text")
        m.id, m.kind, m.tier = _b(id, "id"), _b(kind, "kind"), _b(tier, "tier")
        if importance is not None:
            m.importance = _number(importance, "importance")
        m.metadata = _json_text(metadata, "metadata")
        m.links = _json_text(links, "links")
        m.created_at = _ms(created_at, "created_at")
        m.expires_at = _ms(expires_at, "expires_at")
        arr, dim = _vector(vector)
        if arr is not None:
            keep.append(arr)
            m.vector = arr
            m.dim = dim

    def add(self, ns: str, text: str, *, id: Optional[str] = None,
            kind: Optional[str] = None, tier: Optional[str] = None,
            importance: Optional[float] = None, metadata: Union[dict, str, None] = None,
            links: Optional[Sequence[str]] = None, created_at: TimeLike = None,
            expires_at: TimeLike = None, vector: Optional[Sequence[float]] = None,
            with_outcome: bool = False):
        """Add one memory to namespace ns and return its id (generated unless
        given; giving an existing id replaces that memory). The same text
        again in ns is folded into the first (its id comes back). With
        with_outcome=True, return (id, "added" | "upserted" | "duplicate")."""
        m, keep = _Memory(), []
        self._fill(m, keep, ns, text, id, kind, tier, importance, metadata,
                   links, created_at, expires_at, vector)
        buf = ctypes.create_string_buffer(_ID_CAP)
        outcome = c_int(0)
        with self._lock:
            self._check(_add(self._handle(), byref(m), buf, _ID_CAP, byref(outcome)), "add")
        mid = _str(buf.value)
        return (mid, _OUTCOMES.get(outcome.value, "added")) if with_outcome else mid

    def add_many(self, memories: Iterable[Union[Mapping[str, Any], Memory]],
                 ns: Optional[str] = None) -> list:
        """Add memories in one transaction (all or none) and return their
        ids in order. Each is a dict with "text" and optionally "ns" (else
        the ns argument), "id", "kind", "tier", "importance", "metadata",
        "links", "created_at", "expires_at", "vector"; or a Memory. On
        failure nothing is written and the error's .index says which
        memory was at fault (None when no single one was)."""
        items = [m if isinstance(m, Mapping) else m.__dict__ for m in memories]
        if not items:
            return []
        arr, keep = (_Memory * len(items))(), []
        allowed = {"ns", "text", "id", "kind", "tier", "importance", "metadata",
                   "links", "created_at", "expires_at", "vector"}
        for i, it in enumerate(items):
            args = {k: v for k, v in it.items() if k in allowed}
            args.setdefault("ns", ns)
            if args.get("ns") is None:
                args["ns"] = ns
            if "text" not in args:
                e = InvalidArgumentError(-1, f"add_many: memory {i} has no text")
                e.index = i
                raise e
            self._fill(arr[i], keep, **args)
        ids = ctypes.create_string_buffer(_ID_CAP * len(items))
        failed = c_long(-1)
        with self._lock:
            rc = _add_batch(self._handle(), arr, len(items), ids, _ID_CAP, byref(failed))
            if rc != 0:
                e = _error(rc, f"add_many: {_str(_errmsg(self._h)) or ''}".rstrip(": "))
                e.index = failed.value if failed.value >= 0 else None
                raise e
        raw = ids.raw
        return [_str(raw[i * _ID_CAP:(i + 1) * _ID_CAP].split(b"\0", 1)[0])
                for i in range(len(items))]

    def update(self, ns: Optional[str], id: str, *, text=_UNSET, kind=_UNSET,
               tier=_UNSET, importance=_UNSET, metadata=_UNSET, links=_UNSET,
               expires_at=_UNSET, actor: Optional[str] = None) -> Memory:
        """Change the given fields of memory (ns, id) (ns may be None when
        the id is unique); metadata and links are replaced whole; history
        keeps the previous version. Returns the memory as it now is."""
        p = _Patch()
        _patch_init(byref(p))
        given = [(text, _SET_TEXT, "text", _b), (kind, _SET_KIND, "kind", _b),
                 (tier, _SET_TIER, "tier", _b),
                 (metadata, _SET_METADATA, "metadata", _json_text),
                 (links, _SET_LINKS, "links", _json_text)]
        for value, bit, name, conv in given:
            if value is not _UNSET:
                p.fields |= bit
                setattr(p, name, conv(value, name))
        if importance is not _UNSET:
            p.fields |= _SET_IMPORTANCE
            p.importance = _number(importance, "importance")
        if expires_at is not _UNSET:
            p.fields |= _SET_EXPIRES
            p.expires_at = _ms(expires_at, "expires_at")
        p.actor = _b(actor, "actor")
        if not p.fields:
            raise InvalidArgumentError(-1, "update: nothing to change")
        with self._lock:
            self._check(_update(self._handle(), _b(ns, "ns"), _b(id, "id"), byref(p)), f"update {id}")
        return self.get(ns, id)

    def invalidate(self, ns: Optional[str], id: str, superseded_by: Optional[str] = None,
                   reason: Optional[str] = None) -> None:
        """Hide (ns, id) from recall and keep it, optionally naming the
        memory that replaces it."""
        with self._lock:
            self._check(_invalidate(self._handle(), _b(ns, "ns"), _b(id, "id"),
                                    _b(superseded_by, "superseded_by"), _b(reason, "reason")), f"invalidate {id}")

    def forget(self, ns: Optional[str], id: str, purge: bool = False) -> None:
        """Archive (ns, id) (out of recall, restorable), or with purge=True
        delete it for good (history keeps a row without the text)."""
        with self._lock:
            self._check(_forget(self._handle(), _b(ns, "ns"), _b(id, "id"), 1 if purge else 0),
                        f"forget {id}")

    def clear(self, ns: str) -> int:
        """Delete every memory of ns, or of every namespace ns matches when it
        is a pattern ("*", "agent:*"); returns how many."""
        if any(c in ns for c in "*?["):
            return int(self.call("clear", ns=ns, yes=True).get("deleted", 0))
        n = c_int64(0)
        with self._lock:
            self._check(_clear(self._handle(), _b(ns, "ns"), byref(n)), f"clear {ns}")
        return n.value

    # -- reading -----------------------------------------------------------
    def get(self, ns: Optional[str], id: str) -> Memory:
        """The memory (ns, id); NotFoundError if there is none. Does not
        count as an access."""
        rec = _H()
        with self._lock:
            self._check(_get(self._handle(), _b(ns, "ns"), _b(id, "id"), byref(rec)), f"get {id}")
            try:
                return Memory._from_c(_record_memory(rec).contents)
            finally:
                _record_free(rec)

    def recall(self, query: Optional[str] = None, *, ns: Optional[str] = None,
               namespaces: Optional[Sequence[str]] = None, k: Optional[int] = None,
               profile: Optional[str] = None, filter: Union[dict, str, None] = None,
               vector: Optional[Sequence[float]] = None,
               w_relevance: Optional[float] = None, w_lexical: Optional[float] = None,
               w_recency: Optional[float] = None, w_importance: Optional[float] = None,
               w_context: Optional[float] = None,
               min_similarity: Optional[float] = None, min_score: Optional[float] = None,
               recency_base: Optional[float] = None,
               half_life_hours: Optional[float] = None,
               normalize: Optional[bool] = None, candidates: Optional[int] = None,
               tiers: Union[str, Sequence[str], None] = None, now: TimeLike = None,
               touch: bool = True, include_invalid: bool = False) -> RecallResult:
        """The memories of ns (or namespaces) that best match query, best
        first, each a Hit with every score component. filter is a
        Chroma-style dict ({"kind": "lesson", "importance": {"$gte": 0.5}})
        or its JSON text. Every other keyword overrides the profile's value
        when given. touch=False leaves access times alone; now fixes the
        time used (for replays and tests).

        The arguments become the JSON query of POST /v1/recall and go through
        the library's own parser (remem_query_parse), so the rules (k an
        integer in [1, 1000], weights >= 0, ...) and their messages are the
        server's: a violation raises InvalidArgumentError (a ValueError)
        naming the field; a value of the wrong Python type raises TypeError."""
        names = ([ns] if ns is not None else []) + [n for n in (namespaces or []) if n != ns]
        if not names:
            raise InvalidArgumentError(-1, "recall: give ns or namespaces")
        for i, n in enumerate(names):
            _b(n, "ns" if i == 0 and ns is not None else "namespaces")
        body: dict = {"namespaces": names}
        if query is not None:
            _b(query, "query")
            body["text"] = query
        if vector is not None:
            body["vector"] = [_number(x, f"vector[{i}]") for i, x in enumerate(vector)]
        if filter is not None:
            if not isinstance(filter, (str, dict)):
                raise TypeError(f"filter: must be a dict or JSON text (str), "
                                f"not {type(filter).__name__}")
            body["filter"] = filter
        if profile is not None:
            _b(profile, "profile")
            body["profile"] = profile
        for name, value in (("k", k), ("candidates", candidates)):
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise TypeError(f"{name}: must be an int, not {type(value).__name__}")
                body[name] = value
        for name, value in (("w_relevance", w_relevance), ("w_lexical", w_lexical),
                            ("w_recency", w_recency), ("w_importance", w_importance),
                            ("w_context", w_context),
                            ("min_similarity", min_similarity), ("min_score", min_score),
                            ("recency_base", recency_base),
                            ("half_life_hours", half_life_hours)):
            if value is not None:
                if not math.isfinite(_number(value, name)):
                    raise InvalidArgumentError(-1, f"{name}: must be a finite number")
                body[name] = value
        if tiers is not None:
            body["tiers"] = tiers if isinstance(tiers, str) else list(tiers)
        if now is not None:
            body["now"] = now if isinstance(now, str) else _ms(now, "now")
        for name, value in (("normalize", normalize), ("touch", touch),
                            ("include_invalid", include_invalid)):
            if value is not None:
                if not isinstance(value, bool):
                    raise TypeError(f"{name}: must be a bool, not {type(value).__name__}")
                body[name] = value
        return self.recall_json(body)

    def recall_json(self, query: Union[Mapping[str, Any], str]) -> RecallResult:
        """Recall with a query written as POST /v1/recall takes it (a dict or
        its JSON text): {"namespaces": [...], "text": ..., "k": ...}. The
        library parses it (remem_query_parse): the Python side adds no rule
        of its own."""
        text = query if isinstance(query, str) else _json_text(dict(query), "query").decode()
        raw = _b(text, "query")
        pq = _H()
        err = ctypes.create_string_buffer(512)
        rc = _query_parse(raw, len(raw), byref(pq), err, len(err))
        if rc != 0:
            raise _error(rc, f"recall: {_str(err.value)}")
        res = POINTER(_Result)()
        try:
            with self._lock:
                self._check(_recall(self._handle(), _query_json_get(pq), byref(res)), "recall")
        finally:
            _query_json_free(pq)
        try:
            r = res.contents
            ent = r.entity
            return RecallResult(hits=[Hit._from_c(r.hits[i], ent[i] if ent else 0.0)
                                      for i in range(r.n)],
                                profile=_str(r.profile), now=r.now,
                                candidates=r.candidates, took_ms=r.took_ms,
                                memory={1: "off", 2: "partly off"}.get(r.memory_off, "on"))
        finally:
            _result_free(res)

    def history(self, ns: Optional[str], id: str) -> list:
        """Every change of (ns, id), oldest first: dicts with seq, at, op,
        actor, before, after."""
        p = c_void_p()
        with self._lock:
            self._check(_history(self._handle(), _b(ns, "ns"), _b(id, "id"), byref(p)), f"history {id}")
        return _take_json(p)

    def stats(self, ns: Optional[str] = None) -> dict:
        """Counts per namespace, kind and tier, invalidated, expired,
        models, file size."""
        p = c_void_p()
        with self._lock:
            self._check(_stats(self._handle(), _b(ns, "ns"), byref(p)), "stats")
        return _take_json(p)

    def call(self, op: str, /, **args) -> dict:
        """Run one of the library's operations (see operations()) with its
        arguments as keywords; the answer is its JSON object. The library
        checks the arguments against the operation's schema, as for the
        CLI, HTTP and MCP: the Python side adds no rule of its own."""
        raw = _json_text({k: v for k, v in args.items() if v is not None}, op)
        out = c_void_p()
        with self._lock:
            self._check(_call(self._handle(), _b(op, "op"), raw, len(raw), byref(out)), op)
        return _take_json(out)

    def __getattr__(self, name: str):
        op = _OP_METHODS.get(name)
        if op is None or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!s} has no attribute {name!r}")
        return lambda **args: self.call(op, **args)

    def namespaces(self) -> list:
        """The namespaces: dicts with ns, count, model, dim."""
        p = c_void_p()
        with self._lock:
            self._check(_namespaces(self._handle(), byref(p)), "namespaces")
        return _take_json(p)


def connect(path: str = "remem.db", **options) -> Remem:
    """Open the store at path (created if missing); the keywords are those
    of Remem()."""
    return Remem(path, **options)


open = connect  # noqa: A001 (remem_open's name; not in __all__, see above)


def now() -> int:
    """The current time in milliseconds, as remem sees it."""
    return _now()
