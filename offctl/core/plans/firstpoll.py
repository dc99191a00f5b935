"""Where a spout starts a partition it has no position for, in a plan's words: the first-poll strategies the
profiles say, and the clause that says which honour a commit. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from offctl.core.records.model import KafkaCommit, PartitionLog
from offctl.core.records.parse import parse_commit
from offctl.core.rules.consumer import commit_resume
from offctl.core.storm.citations import DO_SEEK, DO_SEEK_OURS
from offctl.core.storm.outcomes import start_outcome
from offctl.core.storm.releases import FirstPoll, Library, Position, SpoutProfile
from offctl.core.storm.start import Resume, client_start, commit_is_ours, first_poll_start

DEFAULTS = SpoutProfile()  # the settings a plan names as "the default" when it does not know the spout's


def _first_polls() -> list[FirstPoll]:
    """The first-poll strategies in the order a plan names them: the default first, UNCOMMITTED_* before the others."""
    return sorted(FirstPoll, key=lambda s: (s is not DEFAULTS.first_poll, not s.uncommitted))


def _strategy(strategy: FirstPoll) -> str:
    return f"{strategy.value} (the default)" if strategy is DEFAULTS.first_poll else strategy.value


def _either(positions: Iterable[Position]) -> str:
    """ "the log start (0) or end (5)": positions joined, the words they share with the first said once."""
    texts = [p.text() for p in positions]
    shared = "the log "
    if all(t.startswith(shared) for t in texts):
        return " or ".join(texts[:1] + [t.removeprefix(shared) for t in texts[1:]])
    return " or ".join(texts)


def _each_first_poll(log: PartitionLog) -> str:
    """Where each first-poll strategy starts a partition without a commit (start.first_poll_start), grouped by
    where: "the log start (0) with UNCOMMITTED_EARLIEST (the default) or EARLIEST, the log end (5) with ..."."""
    by: dict[Position, list[FirstPoll]] = {}
    for strategy in _first_polls():
        start = first_poll_start(replace(DEFAULTS, first_poll=strategy), log.log_start, log.log_end)
        by.setdefault(start, []).append(strategy)
    return ", ".join(f"{start.text()} with {' or '.join(map(_strategy, chosen))}" for start, chosen in by.items())


def _honours_any(strategy: FirstPoll) -> bool:
    """Whether a spout with this first-poll strategy resumes from a commit without Storm metadata (client_start)."""
    return client_start(replace(DEFAULTS, first_poll=strategy), 0, False, commit_is_ours(None, None)).uses_commit


def _plain(profile: SpoutProfile | None, offset: int = 0) -> str:
    """Why a commit of `offset` written without Storm metadata (--no-storm-metadata) is or is not honoured: by this
    spout (start.client_start), or by the first-poll strategies that honour any commit."""
    if profile is not None:
        return f"no Storm metadata (--no-storm-metadata): {_without_metadata(profile, offset)}"
    honour = [s for s in FirstPoll if _honours_any(s)]
    return (
        f"no Storm metadata (--no-storm-metadata): only a spout whose first-poll strategy is "
        f"{' or '.join(s.value for s in honour)} honours this commit"
    )


PLAIN = _plain(None)


def _without_metadata(profile: SpoutProfile, offset: int) -> str:
    """What a spout of `profile` does with a commit of `offset` without Storm metadata, as a clause."""
    return _clause(client_start(profile, offset, False, commit_is_ours(None, None)).why)


def _clause(sentence: str) -> str:
    """behaviour's whole sentence (Resume.why) as a clause of a row's reason, which has said already whether the
    spout resumes: without its opening "The spout resumes from this commit: " or "... ignores this commit: ", lower
    case first, no full stop."""
    head, colon, rest = sentence.partition(": ")
    if colon and head.startswith("The spout ") and head.endswith(" this commit"):
        return rest.removesuffix(".")
    return sentence[:1].lower() + sentence[1:].removesuffix(".")


def _client_start(
    commit: KafkaCommit | None, where: str, log: PartitionLog, profile: SpoutProfile | None = None
) -> str:
    """Where a storm-kafka-client spout starts a partition offctl leaves as it is, in words, as behaviour decides
    it (client_start, start_outcome): with `profile`, where this spout starts; without, where each
    firstPollOffsetStrategy does (KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology,
    v2.8.8)."""
    if profile is not None and commit is None:
        outcome = start_outcome(profile, Library.STORM_KAFKA_CLIENT)
        return (
            f"with no commit, the spout starts {where} at {outcome.sentence(0, log.log_start, log.log_end)}, as "
            f"its firstPollOffsetStrategy {_strategy(profile.first_poll)} does ({outcome.citation})"
        )
    if profile is not None:
        resume = commit_resume(profile, parse_commit(commit), None, log.log_start, log.log_end)
        if resume.crashes:
            return f"the spout throws on {where}'s commit {commit.offset}: {_clause(resume.why)}"
        return (
            f"the spout {'resumes' if resume.uses_commit else 'starts'} {where} at {resume.at.text()}: "
            f"{_clause(resume.why)}"
        )
    if commit is None:
        return (
            f"with no commit, the spout starts {where} at its firstPollOffsetStrategy: {_each_first_poll(log)} "
            f"({DO_SEEK})"
        )
    verdicts: dict[FirstPoll, Resume] = {
        s: client_start(replace(DEFAULTS, first_poll=s), commit.offset, False, False, log.log_start, log.log_end)
        for s in _first_polls()
    }
    resume = [s for s, r in verdicts.items() if r.uses_commit]
    ignore = [s for s, r in verdicts.items() if not r.uses_commit]
    return (
        f"the spout resumes {where} from the commit as it is ({commit.offset}) with "
        f"{' or '.join(map(_strategy, resume))}; {' and '.join(s.value for s in ignore)} ignore a commit that "
        f"is not their topology's and start at {_either(verdicts[s].at for s in ignore)} ({DO_SEEK_OURS})"
    )
