"""The registry: built-ins and plugins through one mechanism, and one clear message per problem."""

from __future__ import annotations

import tomllib
from importlib.metadata import EntryPoints

import pytest

from rig.errors import PluginError
from rig.strategies import registry
from rig.strategies.placement.kafka import KafkaPlacement
from tests.conftest import ROOT
from tests.plugins.conftest import Install, WriteModule

GOOD = """
    import random
    from rig.strategies.placement.kafka import kafka_assignment

    class Good:
        name = "good"
        description = "a fine plugin"
        api_version = 1

        def assign(self, brokers, topic, rng):
            return kafka_assignment(brokers, topic.partitions, topic.replication_factor, rng)
"""


def test_pyproject_declares_exactly_the_builtin_table() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    for kind, table in registry.BUILTIN.items():
        assert declared.get(f"rig.{kind}", {}) == table, kind
    assert set(declared) <= {f"rig.{kind}" for kind in registry.BUILTIN}


def test_every_builtin_loads_and_fits_its_protocol() -> None:
    for kind, table in registry.BUILTIN.items():
        for name in table:
            cls = registry.load(kind, name)
            assert cls.name == name  # type: ignore[attr-defined]
            assert registry.available()[kind][name].builtin


def test_the_in_code_table_stands_in_when_rig_was_never_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "entry_points", lambda: EntryPoints(()))
    registry.refresh()
    try:
        assert registry.known_names("placement")[:3] == ["explicit", "kafka", "kraft-striped"]
        assert registry.load("placement", "kafka") is KafkaPlacement
    finally:
        monkeypatch.undo()
        registry.refresh()


def test_an_installed_plugin_is_found_with_its_distribution(install: Install) -> None:
    install("acme-placement", "2.3.1", entry_points={"rig.placement": {"good": "acme_good:Good"}},
            modules={"acme_good": GOOD})
    found = registry.available()["placement"]["good"]
    assert (found.origin, found.distribution, found.version) == ("acme-placement 2.3.1",
                                                                  "acme-placement", "2.3.1")
    assert registry.load("placement", "good").__name__ == "Good"
    # Built-ins are listed first, then plugins.
    names = registry.known_names("placement")
    assert names.index("good") > max(names.index(b) for b in registry.BUILTIN["placement"])


def test_a_plugin_cannot_shadow_a_builtin_nor_another_plugin(install: Install) -> None:
    install("evil", entry_points={"rig.placement": {"kafka": "acme_good:Good",
                                                    "good": "acme_good:Good"}},
            modules={"acme_good": GOOD})
    install("zzz-late", entry_points={"rig.placement": {"good": "acme_good:Good"}})
    assert registry.load("placement", "kafka") is KafkaPlacement
    assert registry.available()["placement"]["good"].origin == "evil 1.0"
    reasons = {(i.name, i.origin): i.reason for i in registry.ignored()}
    assert "plugins cannot shadow built-ins" in reasons[("kafka", "evil 1.0")]
    assert reasons[("good", "zzz-late 1.0")] == "evil 1.0 already provides this name"


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(PluginError, match=r"unknown placement strategy 'kafak'; known: explicit, "
                                          r"kafka, kraft-striped"):
        registry.load("placement", "kafak")


def test_a_code_path_needs_the_flag_and_says_why() -> None:
    with pytest.raises(PluginError) as refused:
        registry.load("placement", "acme:Good")
    assert "executes that code" in str(refused.value)
    assert "--allow-plugin-paths" in str(refused.value)


def test_a_code_path_loads_with_the_flag(module: WriteModule) -> None:
    module("acme_path", GOOD)
    cls = registry.load("placement", "acme_path:Good", allow_paths=True)
    assert cls.__name__ == "Good"
    assert registry.origin_of("placement", "acme_path:Good") == registry.PATH


def test_every_problem_of_a_broken_class_in_one_message_naming_plugin_kind_origin(
        install: Install) -> None:
    install("broken-pkg", "0.9", entry_points={"rig.placement": {"wrong": "acme_bad:Wrong"}},
            modules={"acme_bad": """
                class Wrong:
                    name = "wrong"
                    api_version = 1

                    def assign(self, brokers, topic):
                        return []
            """})
    with pytest.raises(PluginError) as error:
        registry.load("placement", "wrong")
    message = str(error.value)
    assert message.startswith("placement strategy 'wrong' (acme_bad:Wrong, from broken-pkg 0.9) "
                              "does not fit the placement Protocol: ")
    assert "class attribute 'description' (a str) is missing" in message
    assert "method assign takes (brokers, topic), expected assign(brokers, topic, rng)" in message
    assert error.value.exit_code == 2


def test_a_plugin_that_raises_at_import_is_named_with_where(install: Install) -> None:
    install("crashy", entry_points={"rig.fetch_session": {"crashy": "acme_crash:Sessions"}},
            modules={"acme_crash": "import nonexistent_dependency_xyz\n"})
    with pytest.raises(PluginError, match=r"fetch_session strategy 'crashy' \(acme_crash:Sessions, "
                                          r"from crashy 1.0\): importing acme_crash failed: "
                                          r"ModuleNotFoundError: No module named "
                                          r"'nonexistent_dependency_xyz' \(at .*acme_crash.py:1\)"):
        registry.load("fetch_session", "crashy")


def test_a_protocol_version_this_rig_does_not_drive_is_refused_clearly(install: Install) -> None:
    install("future", entry_points={"rig.placement": {"future": "acme_future:Future"}},
            modules={"acme_future": GOOD.replace("Good", "Future").replace(
                'name = "good"', 'name = "future"').replace("api_version = 1",
                                                              "api_version = 2")})
    with pytest.raises(PluginError, match=r"it implements version 2 of the placement Protocol, "
                                          r"but rig \S+ drives version 1"):
        registry.load("placement", "future")


def test_extra_parameters_need_defaults_and_names_must_match() -> None:
    class Extra:
        name = "extra"
        description = "d"

        def assign(self, brokers, topic, rng, verbose=False):
            return []

    class Renamed(Extra):
        def assign(self, nodes, topic, rng):  # type: ignore[override]
            return []

    class Required(Extra):
        def assign(self, brokers, topic, rng, mode):  # type: ignore[override]
            return []

    assert registry.conformance_problems("placement", Extra) == []
    assert registry.conformance_problems("placement", Renamed) == [
        "method assign takes (nodes, topic, rng), expected assign(brokers, topic, rng)"]
    assert registry.conformance_problems("placement", Required) == [
        "method assign also requires (mode), which rig never passes: give them defaults"]


def test_a_constructor_that_rejects_its_options_is_a_plugin_error() -> None:
    with pytest.raises(PluginError, match=r"rejected its options \{'colour': 'red'\}: TypeError"):
        registry.instantiate("placement", "kafka", {"colour": "red"})
