"""The read-back of a written plan: whether what is stored now is what the plan wrote. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from offctl.core.plans.firstpoll import DEFAULTS, _clause, _either, _honours_any
from offctl.core.plans.plan import Change, Plan
from offctl.core.records.jstorm import parse_jstorm_node
from offctl.core.records.model import KafkaCommit, ZkNode
from offctl.core.records.parse import parse_commit
from offctl.core.rules.consumer import commit_resume
from offctl.core.storm import jstorm
from offctl.core.storm.citations import DO_SEEK_OURS
from offctl.core.storm.releases import FirstPoll, SpoutProfile
from offctl.core.storm.start import first_poll_start

# --- verification ---------------------------------------------------------------------------------------


def verify_zookeeper(plan: Plan, read_back: Mapping[str, bytes | None]) -> list[str]:
    """Problems found reading the written nodes back: each must hold exactly the planned bytes, and each
    deleted node must be gone."""
    return [
        f"{c.path} still exists after its deletion"
        if c.delete
        else f"{c.path} holds {_show(read_back.get(c.path))} instead of the planned offset {c.after}"
        for c in plan.writes
        if read_back.get(c.path) != c.after_data
    ]


def verify_jstorm(plan: Plan, read_back: Mapping[str, bytes | None]) -> list[str]:
    """verify_zookeeper, then JStorm's spout's own reading of each record read back (json-simple, the (Long) cast:
    parse_jstorm_node): it must take the planned offset from it, and so fetch the target first."""
    problems = verify_zookeeper(plan, read_back)
    for c in plan.writes:
        data = read_back.get(c.path)
        if c.delete or data is None or data != c.after_data:
            continue  # said by verify_zookeeper
        node = ZkNode(plan.key.zk_root, plan.key.consumer, c.path, c.partition, c.topic, data, 0, 0, jstorm=True)
        record = parse_jstorm_node(node)
        if record.malformed is not None or record.committed != c.after:
            why = record.malformed or f"it reads offset {record.committed}, not {c.after}"
            problems.append(f"{c.path}: JStorm's spout would not fetch {jstorm.resumes_at(c.after)} first: {why}")
    return problems


@dataclass(frozen=True)
class KafkaReadBack:
    """What reading a group's commits back after a write finds: `problems` fail the verification (exit 5),
    `notes` are said with the result."""

    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def verify_kafka(
    plan: Plan,
    read_back: Mapping[tuple[str, int], tuple[int, str | None]],
    profile: SpoutProfile = SpoutProfile(),
    running: frozenset[str] | None = None,
    topology_id: str | None = None,
) -> KafkaReadBack:
    """Check the group's commits read back: the planned offset on each, and whether a spout of `profile`
    resumes from it as the broker kept it (consumer.commit_resume: the answer inspect gives). `topology_id`: the
    storm id the operator named for the commits (--topology-id), counted as running alongside `running`.
    Metadata the broker did not keep fails only where the spout would therefore ignore the commit; where it
    still resumes from it (UNCOMMITTED_*), a note says what a spout whose strategy ignores it would do."""
    if any(c.delete for c in plan.writes):  # the group was deleted: none of its commits may be left
        return KafkaReadBack(
            tuple(
                f"{t}/{p} still has commit {o} after group {plan.key.consumer} was deleted"
                for (t, p), (o, _) in sorted(read_back.items())
            )
        )
    if topology_id:
        running = (running or frozenset()) | {topology_id}
    problems, dropped = [], []
    for c in plan.writes:
        where = f"{c.topic}/{c.partition}"
        got = read_back.get((c.topic, c.partition))
        problem, lost = _commit_read_back(plan, c, where, got, profile, running)
        if problem is not None:
            problems.append(problem)
        elif lost:
            dropped.append((where, got[1]))
    return KafkaReadBack(tuple(problems), _dropped_notes(dropped, profile))


def _commit_read_back(
    plan: Plan,
    c: Change,
    where: str,
    got: tuple[int, str | None] | None,
    profile: SpoutProfile,
    running: frozenset[str] | None,
) -> tuple[str | None, bool]:
    """What one written commit read back (`got`: its offset and metadata, None: no commit) says: the problem that
    fails the verification (None: none), and whether the broker dropped the Storm metadata written while the spout
    still resumes from the commit."""
    if got is None:
        return f"{where} has no commit after writing {c.after}", False
    if got[0] != c.after:
        return f"{where} is at {got[0]}, not the planned {c.after}", False
    verdict = commit_resume(
        profile, parse_commit(KafkaCommit(plan.key.consumer, c.topic, c.partition, got[0], got[1])), running
    )
    kept = got[1] == c.after_metadata
    if verdict.crashes:
        return f"{where}: the broker kept {_meta(got[1])}, on which {_clause(verdict.why)}", False
    if not verdict.uses_commit:
        lost = "" if kept else f"the broker kept {_meta(got[1])} instead of the Storm metadata written, and "
        return f"{where}: {lost}the spout will ignore this commit: {verdict.reason}", False
    return None, not kept


def _dropped_notes(dropped: list[tuple[str, str | None]], profile: SpoutProfile) -> tuple[str, ...]:
    """The note on the commits whose Storm metadata the broker did not keep (`dropped`: where, and what it kept)
    but from which a spout of `profile` still resumes: what a spout whose strategy ignores them would do."""
    notes = ()
    if dropped:
        kept_as = sorted({_meta(m) for _, m in dropped})
        ignore = [s for s in FirstPoll if not _honours_any(s)]
        edges = [first_poll_start(replace(DEFAULTS, first_poll=s), None, None) for s in ignore]
        notes = (
            f"The broker did not keep the Storm metadata written on {_listed([w for w, _ in dropped])} (it "
            f"kept {' or '.join(kept_as)}). A spout with {profile.first_poll.value} still resumes from these "
            f"commits; one with {' or '.join(s.value for s in ignore)} would ignore them and start at "
            f"{_either(edges)} ({DO_SEEK_OURS}).",
        )
    return notes


def _meta(metadata: str | None) -> str:
    if not metadata:
        return "no metadata"
    return "metadata " + repr(metadata if len(metadata) <= 80 else metadata[:77] + "...")


def _listed(items: list[str], most: int = 10) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more partition(s)" if len(items) > most else "")


def _show(data: bytes | None) -> str:
    if data is None:
        return "nothing (node gone)"
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= 120 else text[:117] + "...")
