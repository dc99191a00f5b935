"""Which profile judges which consumer (offctl.core.rules.profiles; docs/contract.md, "Per-spout profiles")."""

import pytest

from offctl.core.records.model import KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey, Thresholds
from offctl.core.rules.profiles import Profile, Profiles

LEGACY = Profile("legacy", "legacy-*", Thresholds(expected_topic="orders"))
ONE = Profile("one", "legacy-1", Thresholds(lag_threshold=5))
ANY = Profile("any", "*", Thresholds(lag_threshold=9))


@pytest.mark.parametrize(
    "profiles, key, want",
    [
        ((LEGACY, ONE), ConsumerKey(ZOOKEEPER, "legacy-1", "/r"), "one"),  # exact before glob, whatever the order
        ((ONE, LEGACY), ConsumerKey(ZOOKEEPER, "legacy-2", "/r"), "legacy"),
        ((LEGACY, ANY), ConsumerKey(KAFKA, "legacy-9"), "legacy"),  # the first glob in order
        ((ANY, LEGACY), ConsumerKey(KAFKA, "legacy-9"), "any"),
        ((LEGACY,), ConsumerKey(TRIDENT, "orders-state"), None),  # no match: the defaults
        ((Profile("br", "legacy-[12]", Thresholds()),), ConsumerKey(ZOOKEEPER, "legacy-3", "/r"), None),
        ((Profile("lit", "a.b", Thresholds()),), ConsumerKey(ZOOKEEPER, "aXb", "/r"), None),  # '.' is no wildcard
    ],
)
def test_the_profile_that_judges_a_consumer(profiles, key, want):
    default = Thresholds(lag_threshold=1)
    name, thresholds = Profiles(default, profiles).judging(key)
    assert name == want
    assert thresholds == (next(p.thresholds for p in profiles if p.name == want) if want else default)


def test_plain_thresholds_are_a_run_without_profiles():
    t = Thresholds(lag_threshold=3)
    assert Profiles(t).judging(ConsumerKey(KAFKA, "g")) == (None, t)
    assert Profiles(t, (ANY,)).judging(ConsumerKey(KAFKA, "g"))[0] == "any"
