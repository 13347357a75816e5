"""Deterministic, seeded ``conversation-v1`` fixtures for tests and benchmarks.

``synthesize(seed, messages, turns=..., edit_rate=..., delete_rate=..., lang=...)``
returns fixture data whose history holds exactly ``messages`` messages after
the last turn: one system message, then user / assistant exchanges with an
occasional tool call (an assistant message followed by a ``tool`` result).
Each turn appends as many messages as keep the history on a straight line to
that size, edits a random earlier message with probability ``edit_rate`` and
deletes one with probability ``delete_rate``; with ``edit_window=N`` those
edits and deletes pick among the N most recent live messages (people mostly
edit what they just wrote, which is where the cutter's anchor sits when the
budget is small), otherwise among all of them.  Only ``random.Random(seed)`` is
used, so the same arguments always give the same bytes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from risutools.errors import ConfigError, UsageError
from risutools.replay.component import write_or_fail
from risutools.replay.fixture import MAX_FIXTURE_BYTES, stream_fixture_bytes

_KO = (
    "오늘 비가 와서 창밖이 흐릿하다",
    "그녀는 오래된 지도를 펼쳤다",
    "마을 끝 등대에 불이 켜졌다",
    "우리는 조용히 다음 장으로 넘어갔다",
    "기억은 생각보다 오래 남는다",
    "찻잔에서 김이 피어올랐다",
    "성문 앞에서 경비병이 길을 막았다",
    "바람이 돛을 가득 채웠다",
    "그는 대답 대신 웃기만 했다",
    "편지에는 낯선 이름이 적혀 있었다",
    "밤하늘에 별똥별이 지나갔다",
    "시장 골목은 늘 붐볐다",
    "검을 다시 칼집에 넣었다",
    "약속한 시간이 한참 지났다",
    "작은 고양이가 발밑을 맴돌았다",
)
_EN = (
    "the rain kept falling on the harbor",
    "she unfolded the old map again",
    "a lantern flickered at the end of the pier",
    "we moved on to the next chapter",
    "memories last longer than we expect",
    "steam rose from the teacup",
    "the guard blocked the gate without a word",
    "wind filled the sails at dawn",
    "he only smiled instead of answering",
    "the letter carried a stranger's name",
    "a meteor crossed the night sky",
    "the market street was crowded as always",
    "the sword went back into its sheath",
    "the agreed hour had long passed",
    "a small cat circled around their feet",
)
_TOOLS = ("dice.roll", "weather.lookup", "inventory.list", "memory.search")
LANGS = ("ko", "en", "mixed")


def _text(rng: random.Random, lang: str, lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    parts: list[str] = []
    for _ in range(n):
        pool = _KO if lang == "ko" or (lang == "mixed" and rng.random() < 0.6) else _EN
        parts.append(rng.choice(pool))
    return ". ".join(parts) + "."


#: the most messages ``replay synth`` makes: a fixture of more is past the 64 MiB bound a
#: fixture is read within (about 210 bytes a message as NDJSON, more as JSON or YAML), and
#: the conversation is built before it is written (about 1.75 KB a message: 440 MB here;
#: 2,000,000 ran out of memory, the fuzzer found)
MAX_MESSAGES = 250_000


def _check_arguments(messages: int, turns: int | None, rates: dict[str, float],
                     lang: str, edit_window: int | None) -> int:
    """Refuse out-of-range arguments (one line each, naming the option); the turn count."""
    if lang not in LANGS:
        raise UsageError("--lang", f"must be one of {', '.join(LANGS)}, got {lang!r}")
    if not 2 <= messages <= MAX_MESSAGES:
        raise UsageError("--messages", f"must be between 2 and {MAX_MESSAGES}, got {messages}")
    n_turns = turns if turns is not None else max(1, (messages - 1) // 2)
    if not 1 <= n_turns <= messages - 1:
        raise UsageError("--turns",
                         f"must be between 1 and messages-1 ({messages - 1}), got {turns}")
    for key, rate in rates.items():
        if not 0.0 <= rate <= 1.0:
            raise UsageError(f"--{key}", f"must be between 0 and 1, got {rate}")
    if edit_window is not None and not 1 <= edit_window <= 1_000_000:
        raise UsageError("--edit-window", f"must be between 1 and 1000000, got {edit_window}")
    return n_turns


class _Conversation:
    """The live messages of a synthetic conversation, and the one random source (every
    draw happens in the same order as ever: the same seed gives the same fixture)."""

    def __init__(self, seed: int, lang: str, edit_window: int | None) -> None:
        self.rng = random.Random(seed)
        self.lang = lang
        self.edit_window = edit_window
        self.counter = 0
        self.live: list[str] = []  # editable/deletable ids (not the system message)
        self.where: dict[str, int] = {}
        self.order: list[str] = []  # every appended id, oldest first (deleted ones stay)
        self.expect_user = True

    def text(self, lo: int, hi: int) -> str:
        return _text(self.rng, self.lang, lo, hi)

    def new_id(self) -> str:
        mid = f"m{self.counter}"
        self.counter += 1
        return mid

    def recent(self, n: int, skip_last: bool) -> list[str]:
        """Up to ``n`` live ids, newest first (``skip_last``: not the newest one)."""
        got: list[str] = []
        i = len(self.order) - (2 if skip_last else 1)
        while i >= 0 and len(got) < n:
            if self.order[i] in self.where:
                got.append(self.order[i])
            i -= 1
        return got

    def pick(self, skip_last: bool) -> str:
        live, rng = self.live, self.rng
        if self.edit_window is None:
            # never the message just appended last: the request always has something new
            choices = len(live) - 1 if skip_last else len(live)
            return live[rng.randrange(choices)] if choices > 0 else live[0]
        near = self.recent(self.edit_window, skip_last) or self.recent(self.edit_window, False)
        return near[rng.randrange(len(near))]

    def track(self, mid: str) -> None:
        self.where[mid] = len(self.live)
        self.live.append(mid)
        self.order.append(mid)

    def untrack(self, mid: str) -> None:
        i = self.where.pop(mid)
        last = self.live.pop()
        if last != mid:
            self.live[i] = last
            self.where[last] = i

    def append(self, need: int, tool_rate: float) -> list[dict[str, str]]:
        """``need`` new messages: user, assistant (sometimes a tool call and its result)."""
        out: list[dict[str, str]] = []
        while len(out) < need:
            if self.expect_user:
                out.append({"id": self.new_id(), "role": "user", "content": self.text(1, 4)})
                self.expect_user = False
            elif need - len(out) >= 3 and self.rng.random() < tool_rate:
                tool = self.rng.choice(_TOOLS)
                out.append({"id": self.new_id(), "role": "assistant",
                            "content": f"(calls {tool}) " + self.text(1, 2)})
                out.append({"id": self.new_id(), "role": "tool",
                            "content": f"{tool} -> " + self.text(1, 3)})
            else:
                out.append({"id": self.new_id(), "role": "assistant",
                            "content": self.text(2, 8)})
                self.expect_user = True
        return out


def synthesize(
    seed: int,
    messages: int,
    *,
    turns: int | None = None,
    edit_rate: float = 0.05,
    delete_rate: float = 0.02,
    tool_rate: float = 0.1,
    lang: str = "mixed",
    name: str | None = None,
    config: dict[str, Any] | None = None,
    edit_window: int | None = None,
) -> dict[str, Any]:
    rates = {"edit-rate": edit_rate, "delete-rate": delete_rate, "tool-rate": tool_rate}
    n_turns = _check_arguments(messages, turns, rates, lang, edit_window)
    conv = _Conversation(seed, lang, edit_window)
    rng = conv.rng
    sys_msg = {"id": conv.new_id(), "role": "system",
               "content": conv.text(2, 4) + " (system: stay in character)"}
    size = 1
    out_turns: list[dict[str, Any]] = []
    for t in range(n_turns):
        edits: list[dict[str, str]] = []
        deletes: list[dict[str, str]] = []
        if conv.live and rng.random() < edit_rate:
            mid = conv.pick(False)
            edits.append({"id": mid, "content": conv.text(1, 6) + " (edited)"})
        will_delete = bool(conv.live) and rng.random() < delete_rate
        goal = 1 + ((t + 1) * (messages - 1)) // n_turns
        appended = conv.append(goal - size + (1 if will_delete else 0), tool_rate)
        for m in appended:
            conv.track(m["id"])
        if will_delete:
            mid = conv.pick(bool(appended))
            conv.untrack(mid)
            deletes.append({"id": mid})
            if edits and edits[0]["id"] == mid:
                edits = []
        size += len(appended) - len(deletes)
        turn: dict[str, Any] = {}
        if appended:
            turn["append"] = appended
        if edits:
            turn["edit"] = edits
        if deletes:
            turn["delete"] = deletes
        out_turns.append(turn)
    data: dict[str, Any] = {
        "fixture": "conversation-v1",
        "name": name or f"synth-{seed}-{messages}-{lang}",
    }
    if config is not None:
        data["config"] = config
    data["messages"] = [sys_msg]
    data["turns"] = out_turns
    return data


def fixture_bytes(data: dict[str, Any], path: str | Path) -> bytes:
    suffix = Path(path).suffix.lower()
    if suffix in (".ndjson", ".jsonl"):
        header = {k: v for k, v in data.items() if k != "turns"}
        lines = [json.dumps(header, ensure_ascii=False, sort_keys=True)]
        lines += [json.dumps(t, ensure_ascii=False, sort_keys=True) for t in data["turns"]]
        return ("\n".join(lines) + "\n").encode("utf-8")
    if suffix == ".json":
        return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    if suffix in (".yaml", ".yml"):
        import yaml  # (here, not at import: ~30 ms of every command's start-up)

        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False).encode("utf-8")
    raise UsageError("--output", f"{path} must end in .ndjson, .jsonl, .json, .yaml or .yml "
                     "(the format follows the extension)")


def write_synth(data: dict[str, Any], path: str | Path) -> int:
    """Write the fixture in the format of ``path``'s extension, after reading its bytes back
    as ``replay run`` reads a fixture (NDJSON streamed): one that it would refuse (past 64
    MiB, more turns than a replay takes, more values than YAML's or JSON's memory bound: a
    long fixture as YAML or JSON) is refused here, nothing written (``--output``, exit 2)."""
    blob = fixture_bytes(data, path)
    why = ""
    if len(blob) > MAX_FIXTURE_BYTES:
        why = f"{len(blob):,} bytes, more than the {MAX_FIXTURE_BYTES:,} a fixture may hold"
    else:
        try:
            stream_fixture_bytes(blob, str(path))
        except ConfigError as exc:
            if exc.where == "name":  # (the option at fault: --name, no size advice)
                raise UsageError("--name", f"replay would refuse a fixture so named "
                                 f"({exc.why}): nothing written") from None
            why = f"{exc.where}: {exc.why}" if exc.where else exc.why
    if why:
        streamed = Path(path).suffix.lower() in (".ndjson", ".jsonl")
        raise UsageError("--output", f"replay would refuse this fixture ({why}): nothing "
                         "written; write fewer messages" + ("" if streamed else
                                                            ", or write it as NDJSON"))
    write_or_fail(Path(path), blob)
    return len(blob)
