"""agenttest.yaml checked without its models (plain_settings.py, issue #27): the tables are the models' own, and a
config the plain check lets through is one the models accept, loaded alike — every setting, default, missing
variable and secret."""

from __future__ import annotations

import datetime
import math
import tempfile
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agenttest.agents import settings as models
from agenttest.agents.recorded_config import _LEFT_OUT
from agenttest.agents.registry import PROVIDERS
from agenttest.errors import ConfigError, UsageError
from agenttest.option_table import OPTION_NAMES, options
from agenttest.options import PlainOptions, RunOptions, check_options, merge_options
from agenttest.plain_settings import (
    DEFAULTS,
    MODELS,
    PROVIDER_MODELS,
    TAKES,
    VALIDATED,
    PlainSettings,
    plain_agent,
    plain_config,
    plain_defaults,
    plain_options,
)
from agenttest.project import load_project

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _shown(info: Any) -> str:
    """A field's annotation as the tables name it: as pydantic shows it, with its limits."""
    return str(info.annotation) + (f" {info.metadata}" if info.metadata else "")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_table_is_its_model(name: str) -> None:
    model: type[BaseModel] = getattr(models, name)
    fields = MODELS[name]
    declared = {key: (_shown(info), info.is_required()) for key, info in model.model_fields.items()}
    assert {key: shown for key, shown in declared.items() if key in fields} == fields
    left_out = set(declared) - set(fields)        # nested models: of the plain shapes only when not given
    assert all(issubclass(_nested(model.model_fields[key].annotation), BaseModel) for key in left_out), left_out
    assert all(info.alias is None for info in model.model_fields.values())
    assert model.model_config.get("extra") == "forbid"
    assert {shown for shown, _ in fields.values()} <= set(TAKES)


def _nested(annotation: Any) -> Any:
    return next((arg for arg in getattr(annotation, "__args__", ()) if arg is not type(None)), annotation)


def test_the_built_in_providers_are_those_of_the_registry() -> None:
    assert {name: PROVIDERS[name].settings.__name__ for name in PROVIDER_MODELS} == PROVIDER_MODELS
    assert set(PROVIDER_MODELS) == set(PROVIDERS)


def test_every_run_option_with_a_check_of_its_own_is_known() -> None:
    validated = {name for decorator in RunOptions.__pydantic_decorators__.field_validators.values()
                 for name in decorator.info.fields}
    assert validated == VALIDATED
    assert tuple(RunOptions.model_fields) == OPTION_NAMES


# Values at every edge: strings empty or blank, durations good and bad, booleans beside 0 and 1, numbers at their
# bounds, floats, the choices of the Literal options and a wrong one, objects with keys that are no strings.
texts = st.sampled_from(["", " ", "a", "bench", "30s", "1m30s", "5 minutes", "agents:judge", "failure", "never",
                         "auto", "always", "POST", "GET", "sse", "validator", "judge", "1/2", "tag:x", "("])
scalars = st.none() | st.booleans() | st.integers(-1, 3) | st.sampled_from([0.5, 2.0]) | texts
values = scalars | st.lists(texts, max_size=2) | st.lists(scalars, max_size=2) | st.dictionaries(
    texts, scalars, max_size=2) | st.dictionaries(texts, texts, max_size=2) | st.just({1: "a"}) | st.lists(
    st.dictionaries(texts, scalars, max_size=1), max_size=2)


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good` nine times in ten, else `bad`: configs near the plain shapes, taken or only just not."""
    return st.sampled_from(range(10)).flatmap(lambda draw: good if draw else bad)


def _of_type(kind: Any) -> st.SearchStrategy[Any]:
    """Values of an option's type (the table's), at its edges."""
    if kind is bool:
        return st.booleans()
    if kind is int:
        return st.integers(-1, 12)
    if kind is float:
        return st.sampled_from([0.0, 0.05, 1.0, 100.0, 101.0])
    if get_origin(kind) is Literal:
        return st.sampled_from([*get_args(kind), "nope"])
    return texts


rows = options()
option_values = {name: st.none() | _of_type(rows[name].type) for name in OPTION_NAMES}
defaults = st.dictionaries(st.sampled_from([*OPTION_NAMES, "output-dir", "max-annotations", "fail-on", "nope"]),
                           values, max_size=3) | st.lists(st.sampled_from(OPTION_NAMES), max_size=4).flatmap(
    lambda names: st.fixed_dictionaries({name: _mostly(option_values[name], values) for name in names}))


@SETTINGS
@given(defaults)
def test_defaults_read_plainly_are_defaults_the_model_accepts(value: dict[str, Any]) -> None:
    if plain_defaults(value):
        assert check_options({key.replace("-", "_"): item for key, item in value.items()}) == []


GRID = [None, True, False, -1, 0, 1, 2, 12, 0.0, 0.05, 1.0, 100.0, 101.0, [], ["a"], {}, {"a": 1}, "", " ", "a",
        "30s", "1m30s", "5 minutes", "agents:judge", "1/2", "0/2", "tag:x", "(", "failure", "regression", "never",
        "auto", "always", "failures", "off", "skip", "fail", "ignore", "nope", "K", "default"]


@pytest.mark.parametrize("name", OPTION_NAMES)
def test_each_option_read_plainly_is_one_the_model_accepts(name: str) -> None:
    read = [value for value in GRID if plain_defaults({name: value})]
    assert [value for value in read if check_options({name: value})] == []
    assert read or name in VALIDATED - {"timeout", "simulator", "judge", "cache"} or rows[name].type is float


run_options = st.lists(st.sampled_from(OPTION_NAMES), max_size=5).flatmap(
    lambda names: st.fixed_dictionaries({name: _mostly(option_values[name], values) for name in names}))


def _held(options: Any) -> dict[str, tuple[type, Any]]:
    return {name: (type(getattr(options, name)), getattr(options, name)) for name in OPTION_NAMES}


@SETTINGS
@given(run_options)
def test_options_read_plainly_are_those_the_model_holds(value: dict[str, Any]) -> None:
    """`merge_options(…, plain=True)` (a run of the CLI or the Action): what plain_options reads, the model accepts
    and holds alike — every value of the same type, the same `model_dump`, the same timeout — and what it leaves,
    the model reads (and says what is wrong with)."""
    if plain_options(value) is None:
        return
    assert check_options(value) == []
    if value.get("record") and value.get("replay"):
        for plain in (False, True):
            with pytest.raises(UsageError, match=r"^--record and --replay: "):
                merge_options(value, plain=plain)
        return
    plainly, by_model = merge_options(value, plain=True), merge_options(value)
    assert isinstance(plainly, PlainOptions) and _held(plainly) == _held(by_model)
    for exclude_none in (False, True):
        assert list(plainly.model_dump(exclude_none=exclude_none).items()) == list(
            by_model.model_dump(exclude_none=exclude_none).items())
    assert plainly.timeout_seconds == by_model.timeout_seconds and plainly == by_model


@pytest.mark.parametrize("name", OPTION_NAMES)
def test_each_option_given_alone_is_read_plainly_as_the_model_reads_it(name: str) -> None:
    for value in GRID:
        if plain_options({name: value}) is not None:
            assert _held(merge_options({name: value}, plain=True)) == _held(merge_options({name: value}))


# Values of (or near) each annotation of the settings tables: an item of another type now and then.
near_texts = _mostly(texts, scalars)
OF_ANNOTATION: dict[str, st.SearchStrategy[Any]] = {
    "<class 'str'>": texts, "str | None": st.none() | texts, "<class 'bool'>": st.booleans(),
    "<class 'int'> [Ge(ge=1)]": st.integers(0, 3), "typing.Any": values,
    "dict[str, typing.Any]": st.dictionaries(texts, scalars, max_size=2),
    "dict[str, str]": st.dictionaries(texts, near_texts, max_size=2), "list[str]": st.lists(near_texts, max_size=2),
    "list[str] | str": texts | st.lists(near_texts, max_size=2),
    "str | list[dict[str, typing.Any]] | None": st.none() | texts | st.lists(st.dictionaries(texts, scalars,
                                                                                              max_size=1), max_size=2),
    "typing.Literal['POST', 'PUT', 'PATCH']": st.sampled_from(["POST", "PUT", "PATCH", "GET"]),
    "typing.Optional[typing.Literal['sse']]": st.sampled_from([None, "sse", "SSE"]),
    "typing.Literal['validator', 'simulator', 'generator']": st.sampled_from(["validator", "simulator",
                                                                              "generator", "judge"]),
}


def _entries(model: str, fixed: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    fields = MODELS[model]
    required = {key: _mostly(OF_ANNOTATION[shown], values) for key, (shown, needed) in fields.items()
                if needed and key not in fixed}
    optional = {key: _mostly(OF_ANNOTATION[shown], values) for key, (shown, needed) in fields.items()
                if not needed and key not in fixed}
    extra = {"price": st.just({"input": 1.0, "output": 2.0}), "nope": values}
    return _mostly(st.fixed_dictionaries({**fixed, **required}, optional={**optional, **extra}),
                   st.fixed_dictionaries(fixed, optional={**required, **optional, **extra}))


agent_entries = st.one_of(
    *(_entries(model, {"provider": st.just(name)}) for name, model in PROVIDER_MODELS.items()),
    _entries("BuiltinSettings", {}), st.fixed_dictionaries({"provider": texts}))
configs = st.fixed_dictionaries({}, optional={
    "version": _mostly(st.just(1), st.sampled_from([2, True, "1"])), "defaults": _mostly(defaults, scalars),
    "connectors": _mostly(st.dictionaries(texts, _entries("ConnectorSettings", {}), max_size=2), scalars),
    "agents": _mostly(st.dictionaries(texts, agent_entries, max_size=3), st.just({1: {"provider": "python"}})),
    "agnets": scalars})


@pytest.mark.parametrize("provider", [*PROVIDER_MODELS, "builtin"])
def test_an_agent_read_plainly_is_one_its_model_accepts(provider: str) -> None:
    model = models.BuiltinSettings if provider == "builtin" else PROVIDERS[provider].settings
    fixed = {} if provider == "builtin" else {"provider": st.just(provider)}

    @SETTINGS
    @given(_entries(model.__name__, fixed))
    def check(entry: dict[str, Any]) -> None:
        if plain_agent(entry):
            model.model_validate(entry)

    check()


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_the_plain_defaults_are_the_models(name: str) -> None:
    model: type[BaseModel] = getattr(models, name)
    assert list(model.model_fields) == list(DEFAULTS[name])        # the same fields, in the same order
    for key, info in model.model_fields.items():
        default = DEFAULTS[name][key]
        if info.is_required():
            assert default is None and key in MODELS[name] and MODELS[name][key][1]
        elif default in (list, dict):
            assert info.default_factory is default
        else:
            assert info.default_factory is None and type(info.default) is type(default) and info.default == default


def _fields_held(settings: Any, fields: Any) -> dict[str, tuple[type, Any]]:
    return {key: (type(getattr(settings, key)), getattr(settings, key)) for key in fields}


@pytest.mark.parametrize("provider", [name for name, model in PROVIDER_MODELS.items() if model in DEFAULTS])
def test_an_agent_read_plainly_holds_what_its_model_holds(provider: str) -> None:
    """An agent of the plain shapes is read without its model (`PlainSettings`, a run's agents): every field the
    same value of the same type, its own copy of what the model copies, the same object where the model keeps it;
    the model's own API (`model_dump`, …) answered by the model."""
    model = PROVIDERS[provider].settings

    @SETTINGS
    @given(_entries(model.__name__, {"provider": st.just(provider)}))
    def check(entry: dict[str, Any]) -> None:
        if not plain_agent(entry):
            return
        plainly, by_model = PlainSettings(model.__name__, entry, lambda: model.model_validate(entry)), \
            model.model_validate(entry)
        assert _fields_held(plainly, model.model_fields) == _fields_held(by_model, model.model_fields)
        for key in model.model_fields:
            plain_value, model_value = getattr(plainly, key), getattr(by_model, key)
            assert (plain_value is entry.get(key)) == (model_value is entry.get(key)), key
            if isinstance(model_value, list) and key in entry:
                assert [a is b for a, b in zip(plain_value, entry[key], strict=True)] == [
                    a is b for a, b in zip(model_value, entry[key], strict=True)], key
            if isinstance(model_value, dict) and key in entry:
                assert [a is b for a, b in zip(plain_value.values(), entry[key].values(), strict=True)] == [
                    a is b for a, b in zip(model_value.values(), entry[key].values(), strict=True)], key
        assert plainly.model_dump() == by_model.model_dump() and repr(plainly) == repr(by_model)
        _recorded_alike(PlainSettings(model.__name__, entry, lambda: model.model_validate(entry)), by_model)
        with pytest.raises(AttributeError):
            plainly.builtin  # noqa: B018

    check()


def _recorded_alike(plainly: PlainSettings, by_model: BaseModel) -> None:
    """What a cassette records of the agent (recorded_config: JSON, defaults left out) is the model's, key order
    too; read without the model whenever its values are plain JSON."""
    for exclude in (set(), {"api_key", "headers", "description"}, _LEFT_OUT):
        dumped = plainly.model_dump(mode="json", exclude=exclude, exclude_defaults=True)
        expected = by_model.model_dump(mode="json", exclude=exclude, exclude_defaults=True)
        assert list(dumped.items()) == list(expected.items())
    assert (plainly.__dict__["_model"] is None) == _plain_json(by_model.model_dump(exclude=_LEFT_OUT))


def _plain_json(value: Any) -> bool:
    """Strings, finite numbers, true, false, null, and lists and string-keyed objects of them."""
    if isinstance(value, dict):
        return all(type(key) is str and _plain_json(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain_json(item) for item in value)
    return value is None or type(value) in (str, int, bool) or (type(value) is float and math.isfinite(value))


@pytest.mark.parametrize("params", [{"t": float("inf")}, {"t": float("nan")}, {"d": datetime.date(2026, 1, 2)},
                                    {"n": {1: "a"}}, {"b": b"x"}, {"t": (1, 2)}, {"t": 0.5, "n": [None, True]}])
def test_what_a_cassette_records_of_any_params_is_the_models(params: dict[str, Any]) -> None:
    entry = {"provider": "openai", "model": "m", "params": params, "stream": True}
    model = models.OpenAISettings
    _recorded_alike(PlainSettings("OpenAISettings", entry, lambda: model.model_validate(entry)),
                    model.model_validate(entry))


def test_a_run_reads_its_openai_agent_plainly(tmp_path: Path) -> None:
    path = tmp_path / "agenttest.yaml"
    path.write_text("version: 1\nagents:\n  bot: {provider: openai, model: m, params: {temperature: 0}}\n"
                    "  j: {builtin: validator, model: m}\n  py: {provider: python, callable: 'm:f'}\n")
    agents = load_project(path, plain=True).agents
    assert isinstance(agents["bot"], PlainSettings) and agents["bot"].params == {"temperature": 0}
    assert isinstance(agents["j"], models.BuiltinSettings) and isinstance(agents["py"], models.PythonSettings)
    assert not isinstance(load_project(path).agents["bot"], PlainSettings)


@SETTINGS
@given(_entries("ConnectorSettings", {}))
def test_a_connector_read_plainly_is_one_its_model_accepts(entry: dict[str, Any]) -> None:
    if plain_config({"connectors": {"c": entry}}):
        models.ConnectorSettings.model_validate(entry)


def _loaded(path: Path, plain: bool) -> Any:
    try:
        project = load_project(path, plain=plain)
    except ConfigError as exc:
        return str(exc)
    return (project.defaults, {key: value.model_dump() for key, value in project.agents.items()},
            {key: value.model_dump() for key, value in project.connectors.items()},
            {key: project.role(key) for key in project.agents}, project.missing, project.secret_settings)


@SETTINGS
@given(configs)
def test_a_config_read_plainly_loads_as_the_models_load_it(config: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "agenttest.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        plainly, by_models = _loaded(path, True), _loaded(path, False)
        assert plainly == by_models
        if plain_config(config):
            assert not isinstance(by_models, str), by_models    # the models find no problem in it


def test_a_usual_config_is_read_plainly() -> None:
    assert plain_config({"version": 1, "defaults": {"name": "bot", "judge": "agents:j", "timeout": "30s",
                                                    "parallel": 8, "fail-on": "never", "verbose": True},
                         "connectors": {"gpt": {"model": "m", "api_key": "k", "params": {"temperature": 0}}},
                         "agents": {"bot": {"provider": "openai", "connector": "gpt", "stream": True},
                                    "j": {"builtin": "validator", "connector": "gpt"},
                                    "tool": {"provider": "exec", "command": ["python", "x.py"]},
                                    "web": {"provider": "http", "url": "http://127.0.0.1:9", "method": "PUT"},
                                    "py": {"provider": "python", "callable": "m:f"}}})
