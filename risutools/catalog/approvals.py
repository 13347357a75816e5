"""Human approval records: ``approvals/*.yaml``, optionally SSH-signed like git commits.

A record is ``{component_id, component_version, action, reviewer, at, base_sha256,
note}`` (+ ``signature``).  ``base_sha256`` is the base hash the reviewer read
(``risutools hash``: the canonical hash of the document without its runtime fields).
The signed bytes are the canonical JSON of the record without ``signature`` (keys
sorted, no whitespace), signed with ``ssh-keygen -Y sign -n risutools-approval -f KEY``
and checked with ``ssh-keygen -Y verify`` against the ``allowed_signers`` file (git's format,
principal = the record's ``reviewer``) that the catalog configuration names::

    catalog:
      allowed_signers: .allowed_signers
      require_signatures: true

Records are never edited: the transition log names each one with the SHA-256
of its bytes.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from risutools.canonical import canonical, prefixed
from risutools.catalog.catalog import Catalog, Entry, file_sha256
from risutools.catalog.sshsig import fast_verified
from risutools.contract.records import parse_record, record_key, signed_bytes
from risutools.contract.sieve import Needles, needles
from risutools.contract.transitions import ApprovalCheck, UsedRecords
from risutools.errors import Code, RisuError, UsageError
from risutools.jsonlines import require_text
from risutools.pathnames import id_file_stem, real_path, show_name
from risutools.printable import plain_text_problem, require_plain_text
from risutools.safeio import (
    FileRefused,
    FolderFiles,
    file_problem,
    open_regular,
    read_inside,
    read_regular,
)
from risutools.settings import lifecycle
from risutools.settings.catalog import CatalogSettings

MAX_APPROVAL_BYTES = 1024 * 1024  # an approval record is a few hundred bytes

FIELDS = lifecycle.APPROVAL_FIELDS
SIG_TIMEOUT = 30  # seconds for one ssh-keygen call
#: an allowed_signers file larger than this is not read in process (ssh-keygen reads it)
MAX_SIGNERS_BYTES = 1024 * 1024


def now_iso() -> str:
    """Now, ISO 8601 with zone (UTC); ``SOURCE_DATE_EPOCH`` pins it (reproducible runs).  A
    ``SOURCE_DATE_EPOCH`` that is not a whole number of seconds (reproducible-builds.org: a
    malformed value is an error, never ignored) or past what a record can hold (after the
    year 9999; any number of digits) is a ``usage`` error, one line."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH") or None
    try:
        if epoch is None:
            t: float = time.time()
        elif not (epoch.isascii() and epoch.isdigit()) or len(epoch) > 20:
            raise ValueError(epoch)
        else:
            t = int(epoch)
        return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        raise UsageError("SOURCE_DATE_EPOCH", f"{show_name(epoch or '')[:40]} is not a time a "
                         "record can hold (seconds since 1970, before the year 10000)") from None


def build_record(entry: Entry, action: str, reviewer: str, note: str) -> dict[str, Any]:
    if action not in lifecycle.ACTIONS:
        raise UsageError("--action", f"{action!r} is not one of {', '.join(lifecycle.ACTIONS)}")
    if not reviewer.strip():
        raise UsageError("--reviewer", "must name the person approving")
    require_text(reviewer, "--reviewer")  # text a record can hold and a signature cover
    require_text(note, "--note")
    require_plain_text(reviewer, "--reviewer")  # one line a person reads: no ESC, no newline
    require_plain_text(note, "--note")
    return {"component_id": entry.component_id, "component_version": entry.version,
            "action": action, "reviewer": reviewer, "at": now_iso(),
            "base_sha256": entry.base_sha256, "note": note}


def _ssh_keygen() -> str:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise RisuError(Code.NO_SSH_KEYGEN, "ssh-keygen is not installed (package openssh-client); "
                        "it signs and verifies approvals")
    return exe


def sign(record: dict[str, Any], key: str, namespace: str) -> str:
    """The armored SSH signature of the record's canonical bytes."""
    try:
        open_regular(key).close()  # not-found, not-a-file: as every path
    except FileRefused as exc:
        raise exc.with_path(key) from None
    exe = _ssh_keygen()
    with tempfile.TemporaryDirectory(prefix="risutools-sign-") as tmp:
        msg = Path(tmp) / "record"
        msg.write_bytes(signed_bytes(record))
        try:
            proc = subprocess.run([exe, "-Y", "sign", "-n", namespace, "-f", key, str(msg)],
                                  capture_output=True, timeout=SIG_TIMEOUT,
                                  stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            raise RisuError(Code.SIGN_FAILED, "ssh-keygen did not finish (a key with a passphrase "
                            "needs ssh-agent)", path=key) from None
        sig = Path(str(msg) + ".sig")
        if proc.returncode != 0 or not sig.is_file():
            why = " ".join(proc.stderr.decode("utf-8", "replace").split())[:200]
            raise RisuError(Code.SIGN_FAILED, f"ssh-keygen -Y sign failed: {why}", path=key)
        return sig.read_text("ascii")


@dataclass
class SignatureCheck:
    status: str  # verified | unsigned | bad | not_allowed | unchecked
    detail: str

    @property
    def ok(self) -> bool:
        return self.status == "verified"


def verify_signature(cat: Catalog, record: dict[str, Any]) -> SignatureCheck:
    """The signature state of ``record`` in the catalog ``cat`` (its allowed_signers)."""
    return verify_with(cat.settings, record, cat.rel)


def verify_with(settings: CatalogSettings, record: dict[str, Any],
                shown: Callable[[Path], str] = str) -> SignatureCheck:
    """The signature state of ``record`` against ``settings.allowed_signers`` (``shown``
    names that file in a reason)."""
    sig = record.get("signature")
    if sig is None:
        return SignatureCheck("unsigned", "the record carries no signature")
    if not isinstance(sig, str) or "BEGIN SSH SIGNATURE" not in sig:
        return SignatureCheck("bad", "the signature field is not an SSH signature")
    signers = settings.allowed_signers
    if signers is None:
        return SignatureCheck("unchecked", "no allowed_signers file is configured "
                              "(catalog.allowed_signers)")
    if (bad := file_problem(signers)) is not None:
        return SignatureCheck("unchecked", f"allowed_signers file {shown(signers)} "
                              + ("is missing" if bad.code == Code.NOT_FOUND else bad.why))
    reviewer = record.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer:
        return SignatureCheck("bad", "the record names no reviewer")
    ns = settings.namespace
    data = signed_bytes(record)
    if _fast_verified(signers, sig, reviewer, ns, data):  # (no process: the common case)
        return SignatureCheck("verified", f"signed by {reviewer} (allowed_signers)")
    if "\0" in reviewer:  # (no argument of a process can hold it: no signer is named so)
        return SignatureCheck("not_allowed", f"no allowed signer can be named {reviewer!r} "
                              "(it holds a NUL character)")
    exe = _ssh_keygen()
    with tempfile.TemporaryDirectory(prefix="risutools-verify-") as tmp:
        sigfile = Path(tmp) / "record.sig"
        sigfile.write_text(sig, "ascii", errors="replace")

        def run(*args: str) -> bool:
            try:
                proc = subprocess.run([exe, "-Y", *args], input=data, capture_output=True,
                                      timeout=SIG_TIMEOUT, check=False)
            except (subprocess.TimeoutExpired, ValueError):  # (a NUL in a record's name: no
                return False  # argument a process can take, so nothing it verifies)
            return proc.returncode == 0

        if run("verify", "-f", str(signers), "-I", reviewer, "-n", ns, "-s", str(sigfile)):
            return SignatureCheck("verified", f"signed by {reviewer} (allowed_signers)")
        if run("check-novalidate", "-n", ns, "-s", str(sigfile)):
            return SignatureCheck("not_allowed", f"the signing key is not allowed for "
                                  f"{reviewer!r} in {shown(signers)}")
        return SignatureCheck("bad", "the signature does not match the record (edited after "
                              "signing, or signed for another namespace)")


def _fast_verified(signers: Path, sig: str, reviewer: str, namespace: str,
                   data: bytes) -> bool:
    """:func:`sshsig.fast_verified` over the allowed_signers file (read as a regular file of
    at most ``MAX_SIGNERS_BYTES``; one that cannot be is left to ssh-keygen)."""
    try:
        text = read_regular(signers, MAX_SIGNERS_BYTES).decode("utf-8")
    except (FileRefused, UnicodeDecodeError):
        return False
    return fast_verified(sig, text, reviewer, namespace, data)


def counts(chk: SignatureCheck, required: bool) -> bool:
    """Whether a record with this signature state counts as an approval: THE decision, for
    the approval gate, the history gate and MC305 (``validate``, through :func:`chain_check`)
    and the review (RV303).  With signatures required only ``verified`` counts; without,
    ``verified``, ``unsigned`` and ``unchecked`` do, ``bad`` and ``not_allowed`` never."""
    return chk.ok if required else chk.status in ("verified", "unsigned", "unchecked")


def chain_check(settings: CatalogSettings) -> ApprovalCheck:
    """The check MC305 and the history gate run on the approval of every recorded step
    (:data:`risutools.contract.transitions.ApprovalCheck`): why the record does not count
    (:func:`counts`), or ''.  A process verifies each record once for the same
    allowed_signers file (its path, size, modification and change times, inode) and settings.
    Two checks of the same settings object are equal (a review's MC305 and board ask
    :func:`~risutools.contract.transitions.check_chain` the same question with theirs)."""
    return _ChainCheck(settings)


@dataclass(frozen=True, eq=False)
class _ChainCheck:
    settings: CatalogSettings

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ChainCheck) and other.settings is self.settings

    def __hash__(self) -> int:
        return id(self.settings)

    def __call__(self, root: Path, record: dict[str, Any]) -> str:
        settings = self.settings
        signers = settings.allowed_signers
        try:
            st = signers.stat() if signers is not None else None
            stamp = ((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) if st is not None
                     else None)
        except OSError:
            stamp = None
        key = (str(signers), stamp, settings.require_signatures, settings.namespace,
               canonical(record))
        if key not in _VERDICTS:
            chk = verify_with(settings, record, lambda p: _shown_from(root, p))
            _VERDICTS[key] = "" if counts(chk, settings.require_signatures) else (
                f"signature {chk.status} ({chk.detail})"
                + ("; signatures are required" if settings.require_signatures else ""))
        return _VERDICTS[key]


_VERDICTS: dict[tuple[Any, ...], str] = {}


def _shown_from(root: Path, p: Path) -> str:
    try:
        return real_path(p).relative_to(real_path(root)).as_posix()
    except ValueError:
        return p.as_posix()


@dataclass
class Approval:
    file: str  # relative to the catalog root (approvals/x.yaml)
    path: Path
    sha256: str  # "sha256:" + hex of the file bytes
    record: dict[str, Any] | None
    problem: str = ""
    _sig: SignatureCheck | None = None

    def field(self, name: str) -> str:
        v = (self.record or {}).get(name)
        return v if isinstance(v, str) else ""

    def signature(self, cat: Catalog) -> SignatureCheck:
        if self._sig is None:
            self._sig = verify_signature(cat, self.record or {})
        return self._sig


#: the name ``approve`` gives a record: ``<id stem>--<action>--<12 hex of the base>[-n].yaml``
_RECORD_NAME = re.compile(r"(?P<stem>.+)--(?P<action>[a-z_]+)--[0-9a-f]{12}(?:-[0-9]+)?\.yaml\Z",
                          re.DOTALL)


def named_for(name: str, component_id: str, action: str | None = None) -> bool:
    """Whether a record's file name may hold an approval of ``component_id`` (and
    ``action``): a name in ``approve``'s form must name that component (and action); any
    other name may hold anything.  The index :func:`load_approvals` reads by, and the rule
    :func:`find_approval` applies, so a promotion and the review's board agree."""
    m = _RECORD_NAME.match(name)
    if m is None or m.group("action") not in lifecycle.ACTIONS:
        return True
    return m.group("stem") == id_file_stem(component_id) and \
        (action is None or m.group("action") == action)


def load_approvals(cat: Catalog, *, component: str | None = None,
                   action: str | None = None, holding: str | None = None) -> list[Approval]:
    """Every approval record of the catalog (``approvals/``, any depth), or with
    ``component`` (and ``action``) only the records whose file name may be one of theirs
    (:func:`named_for`): a promotion parses its component's records, not the catalog's.
    A file that cannot be read (a FIFO, a device, a link out of the catalog, too large)
    is an :class:`Approval` with its problem, never skipped; an ``approvals/`` leading out
    of the catalog is one such record (the review), or with ``component`` the refusal.
    ``holding`` (a component id): only the records whose bytes may hold it as a string
    (:mod:`risutools.contract.sieve`; every record when it is not plain): a packet reads
    the records that may be its component's, whatever their names, and parses those
    alone (a record it leaves out names no such ``component_id``, nor is one that cannot
    be read)."""
    out: list[Approval] = []
    d = cat.approvals_dir
    if not os.path.lexists(d):
        return out
    try:
        cat.inside(d, "approvals/")
    except FileRefused as exc:
        if component is not None:
            raise  # a promotion stops (exit 2); the review reports it
        return [Approval(cat.rel(d), d, "", None, f"cannot read: {exc.why}")]
    if not d.is_dir():
        return out
    folders: Folders = {}
    mine = None if component is None else \
        functools.partial(named_for, component_id=component, action=action)
    sieve = needles((holding,)) if holding is not None else None
    for p in _record_files(d, mine):
        got = load_approval(cat, p, folders, sieve)
        if got is not None:
            out.append(got)
    return out


#: what a run over many records knows of each folder: its reader
#: (:class:`~risutools.safeio.FolderFiles`: its place resolved once) and its place under the
#: catalog's root (None: not under it)
Folders = dict[Path, tuple[FolderFiles, Path | None]]


def _folder(cat: Catalog, folder: Path, folders: Folders) -> tuple[FolderFiles, Path | None]:
    known = folders.get(folder)
    if known is None:
        try:
            under: Path | None = real_path(folder).relative_to(cat.root)
        except ValueError:
            under = None
        known = folders[folder] = (FolderFiles(cat.root, os.fspath(folder)), under)
    return known


def _record_files(folder: Path, named: Callable[[str], bool] | None = None) -> list[Path]:
    """Every entry under ``folder`` that is not a folder (regular files, links, FIFOs,
    devices: what cannot be read is reported), named ``*.yaml``/``*.yml``/``*.json`` and
    not hidden; links to folders are not entered.  ``named``: only those whose names it
    keeps (asked of the name before the path is made: a catalog has thousands)."""
    found: list[Path] = []
    for dirpath, _dirnames, filenames in os.walk(folder, followlinks=False):
        here = Path(dirpath)
        for name in filenames:
            if name.startswith(".") or not name.endswith(_RECORD_SUFFIXES) or \
                    (named is not None and not named(name)):
                continue
            found.append(here / name)
    return sorted(found)


#: how the names of record files end (a name not hidden: its ``Path.suffix`` is one of them)
_RECORD_SUFFIXES = (".yaml", ".yml", ".json")


def load_approval(cat: Catalog, p: Path, folders: Folders | None = None,
                  sieve: Needles | None = None) -> Approval | None:
    """One record (``folders``: what the run knows of the folders, filled as it goes); read
    and named as :func:`~risutools.safeio.read_inside` and :meth:`Catalog.rel` would.
    ``sieve``: None when the record's bytes cannot hold its strings
    (:meth:`~risutools.contract.sieve.Needles.may_hold`), or it cannot be read."""
    try:
        if folders is None:
            rel = cat.rel(p)
            data = read_inside(cat.root, p, MAX_APPROVAL_BYTES)
        else:
            files, under = _folder(cat, p.parent, folders)
            rel = (under / p.name).as_posix() if under is not None else p.as_posix()
            found = files.read(p.name, MAX_APPROVAL_BYTES)
            data = found if found is not None else read_inside(cat.root, p, MAX_APPROVAL_BYTES)
    except FileRefused as exc:
        return None if sieve is not None else \
            Approval(rel, p, "", None, f"cannot read: {exc.why}")
    if sieve is not None and not sieve.may_hold(data, "json" if rel.endswith(".json")
                                                else "yaml"):
        return None
    digest = prefixed(file_sha256(data))
    rec, why = parse_record(data, rel)
    if rec is None:
        return Approval(rel, p, digest, None, f"unreadable approval: {why}")
    missing = [f for f in FIELDS if f != "note" and not isinstance(rec.get(f), str)]
    if missing:
        return Approval(rel, p, digest, rec, f"approval lacks {', '.join(missing)}")
    if rec.get("action") not in lifecycle.ACTIONS:
        return Approval(rel, p, digest, rec, f"unknown action {rec.get('action')!r}")
    written = _written_problem(rec)
    return Approval(rel, p, digest, rec, written) if written is not None else \
        Approval(rel, p, digest, rec)


def _written_problem(rec: dict[str, Any]) -> str | None:
    """What ``approve`` would not have written in the record (a record written by hand is
    held to the same rules, so the gates count only what the command could write): its
    ``reviewer`` and ``note`` one line of plain text, the reviewer not blank, its ``at`` a
    date and time with its zone (ISO 8601, as ``approve`` writes it: a time without a zone
    names no instant), its ``read`` what its reviewer read of this base
    (:func:`_read_problem`).  None: as written."""
    for key in ("reviewer", "note"):
        value = rec.get(key)
        why = plain_text_problem(value) if isinstance(value, str) else None
        if why is not None:
            return f"approval's {key} {why}"
    if not rec["reviewer"].strip():
        return "approval's reviewer is blank"
    try:
        when = datetime.fromisoformat(rec["at"].removesuffix("Z") + (
            "+00:00" if rec["at"].endswith("Z") else ""))
    except ValueError:
        return f"approval's at is not a date and time (ISO 8601): {rec['at'][:40]!r}"
    if when.utcoffset() is None:  # (a date alone reads as a naive midnight: no zone either)
        return (f"approval's at names no time zone (ISO 8601 with zone, e.g. "
                f"2026-01-02T03:04:05+00:00): {rec['at'][:40]!r}")
    return _read_problem(rec)


#: how a record says what its reviewer read (``read.how``: :func:`~.binding.binding`), and
#: whether that names a base hash (a packet's, or ``--base``)
_READ_HOW: dict[str, bool] = {"packet": True, "base": True, "none": False}


def _read_problem(rec: dict[str, Any]) -> str | None:
    """What is wrong with the record's ``read`` (what its reviewer read), or None: absent
    (a record made before ``approve`` bound it), or as ``approve`` writes it -- a mapping
    whose ``how`` is packet, base or none, and whose ``base_sha256`` (the packet's, or
    ``--base``) is the one the record approves: a record saying its reviewer read another
    version of the document approves what nobody read (a packet older than the document
    cannot be approved)."""
    if "read" not in rec:
        return None
    read = rec["read"]
    how = read.get("how") if isinstance(read, dict) else None
    if not isinstance(how, str) or how not in _READ_HOW:
        return "approval's read is not what `risutools approve` writes (how: packet, base or none)"
    if _READ_HOW[how] and read.get("base_sha256") != rec["base_sha256"]:
        said = read.get("base_sha256")
        shown = repr(said[:19] + "…") if isinstance(said, str) else repr(said)[:40]
        return (f"approval's reviewer read base {shown} ({how}), not the base "
                f"{rec['base_sha256'][:19]}… it approves: a packet older than the document "
                "cannot be approved")
    return None


def _str(dumper: Any, value: str) -> Any:
    """Multi-line strings (the armored signature) as literal blocks."""
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def dump_record(record: dict[str, Any]) -> bytes:
    # (PyYAML here, not at import: every command's start-up would pay ~30 ms for it)
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _str)
    ordered = {k: record[k] for k in (*FIELDS, "read", "signature") if k in record}
    text = yaml.dump(ordered, Dumper=Dumper, allow_unicode=True, sort_keys=False,
                     width=4096, default_flow_style=False)
    return text.encode("utf-8")


def record_path(cat: Catalog, record: dict[str, Any]) -> Path:
    """``approvals/<component_id>--<action>--<base hex 12>[-n].yaml`` (never an existing
    name; the id as :func:`risutools.pathnames.id_file_stem` writes it), in an
    ``approvals/`` that is inside the catalog (``outside-catalog`` otherwise) and a folder of
    its own, no link (``not-a-directory``: :meth:`Catalog.own_folder`)."""
    cat.own_folder(cat.approvals_dir, "approvals/")
    cid = id_file_stem(record["component_id"])
    stem = f"{cid}--{record['action']}--{record['base_sha256'].removeprefix('sha256:')[:12]}"
    p = cat.approvals_dir / f"{stem}.yaml"
    n = 2
    while os.path.lexists(p):
        p = cat.approvals_dir / f"{stem}-{n}.yaml"
        n += 1
    return p


#: what an approval record is to the component it names (:func:`standing`)
USED, ORPHAN, CURRENT, STALE = "used", "orphan", "current", "stale"
#: (the review's word for an unsigned or badly signed record whose decision -- component,
#: action, base -- a record with a verified signature also holds)
SUPERSEDED = "superseded"


def standing(a: Approval, base_sha256: str | None, used: UsedRecords) -> str:
    """Is this approval current?  The one answer, for the gate (:func:`find_approval`),
    packets and the review: ``used`` when a recorded transition already used it (its file,
    without ``approvals/``, or its identity, :func:`record_key`, is in ``used``: a copy of a
    used record is used too; history, neither current nor stale); ``orphan``
    when no document has its component (``base_sha256`` is None); ``current`` when it names
    exactly the document's base hash (:func:`lifecycle.base_sha256`: what the reviewer read,
    runtime fields left out, so a runtime switch leaves it current); else ``stale`` (a
    record made before the base hash left the runtime fields out names the whole-document
    hash: stale, approve again).
    Whether the record reads, names the version and is signed is asked apart.  ``used`` has
    no default: every caller decides with the log's records, as the gates do."""
    if a.file.removeprefix("approvals/") in used or \
            (a.record is not None and record_key(a.record) in used):
        return USED
    if base_sha256 is None:
        return ORPHAN
    base = a.field("base_sha256")
    return CURRENT if base == base_sha256 else STALE


@dataclass
class ApprovalVerdict:
    ok: bool
    approval: Approval | None
    reason: str


def find_approval(cat: Catalog, entry: Entry, action: str,
                  approvals: list[Approval] | None, used: UsedRecords) -> ApprovalVerdict:
    """An approval for exactly ``action`` on exactly the document's current base hash
    (signed and allowed when the catalog requires signatures), that no recorded line used
    (``used``: :func:`~risutools.contract.transitions.used_records`; a record approves one
    step: a switch leaves the base hash as it was)."""
    allr = load_approvals(cat, component=entry.component_id, action=action) \
        if approvals is None else approvals
    mine = [a for a in allr if a.record is not None and not a.problem
            and a.field("component_id") == entry.component_id and a.field("action") == action
            and named_for(a.path.name, entry.component_id, action)]
    current = [a for a in mine if standing(a, entry.base_sha256, used) == CURRENT]
    if not current:
        return _none_current(entry, action, mine, cat.flag(), used)
    right = [a for a in current if a.field("component_version") == entry.version]
    if not right:
        a = current[0]
        return ApprovalVerdict(False, None, f"{a.file} names version "
                               f"{a.field('component_version')!r}, the document is "
                               f"{entry.version!r}")
    if not cat.settings.require_signatures:
        return _unrequired(cat, right)
    problems = []
    for a in right:
        chk = a.signature(cat)
        if counts(chk, True):
            return ApprovalVerdict(True, a, f"{a.file} by {a.field('reviewer')}: {chk.detail}")
        problems.append(f"{a.file}: {chk.status} ({chk.detail})")
    return ApprovalVerdict(False, None, "signatures are required and no valid one was found: "
                           + "; ".join(problems))


def _none_current(entry: Entry, action: str, mine: list[Approval], flag: str,
                  used: UsedRecords) -> ApprovalVerdict:
    """No approval of ``action`` names the current base hash and is unused: one a recorded
    step used, a stale one, or none (``flag``: what names the catalog in the command
    printed)."""
    spent = [a for a in mine if standing(a, entry.base_sha256, used) == USED
             and a.field("base_sha256") == entry.base_sha256]
    if spent:
        return ApprovalVerdict(False, None, (
            f"{spent[-1].file} was used by a recorded step already (a record approves one "
            f"step); a reviewer approves this one: `risutools approve "
            f"{shlex.quote(entry.component_id)} --action {action} --reviewer NAME{flag}`"))
    stale = [a for a in mine if a.field("base_sha256") != entry.base_sha256]  # used or not
    if stale:
        a = stale[-1]
        return ApprovalVerdict(False, None, (
            f"stale approval: {a.file} approved base {a.field('base_sha256')[:19]}…, the "
            f"document is now {entry.base_sha256[:19]}…; a reviewer must approve the "
            f"current version (`risutools approve {shlex.quote(entry.component_id)} --action "
            f"{action}{flag}`)"))
    return ApprovalVerdict(False, None, (
        f"no {action!r} approval for base {entry.base_sha256[:19]}…; a reviewer runs "
        f"`risutools approve {shlex.quote(entry.component_id)} --action {action} "
        f"--reviewer NAME{flag}`"))


def _unrequired(cat: Catalog, current: list[Approval]) -> ApprovalVerdict:
    """Signatures are not required: the first record whose signature is verified, absent or
    not checkable; a bad one does not count."""
    bad: list[str] = []
    for a in current:
        chk = a.signature(cat)
        if counts(chk, False):
            how = {"verified": "signed", "unsigned": "unsigned; signatures not required",
                   "unchecked": "signature not checked: " + chk.detail}[chk.status]
            return ApprovalVerdict(True, a, f"{a.file} by {a.field('reviewer')} ({how})")
        bad.append(f"{a.file}: signature {chk.status} ({chk.detail})")
    return ApprovalVerdict(False, None, "; ".join(bad))
