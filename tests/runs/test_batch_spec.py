"""Experiment specs: what a spec file may say, how it expands into games, and how a bad
spec is reported (one `FILE: FIELD: problem` line per problem, never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from jubensha.cli import app
from jubensha.runs.spec import load_spec
from jubensha.runs.spec_expand import expand
from jubensha.runs.spec_schema import SpecError

TINY = str(Path(__file__).parents[1] / "engine" / "tiny_script.yaml")


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_spec_expands_to_the_cross_product_in_a_fixed_order(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, f"""
scripts: [lighthouse-keeper, {TINY}]
architectures: [naive, extractive]
models: scripted
seeds: {{start: 3, count: 2}}
embedder: none
"""))
    games = expand(spec)
    assert len(games) == 2 * 2 * 2
    assert [(g.settings.script_id, g.settings.architecture, g.settings.seed) for g in games[:4]] \
        == [("lighthouse-keeper", "naive", 3), ("lighthouse-keeper", "naive", 4),
            ("lighthouse-keeper", "extractive", 3), ("lighthouse-keeper", "extractive", 4)]
    assert [g.position for g in games] == list(range(8))
    assert games[0].name == f"lighthouse-keeper.demo.naive.scripted.s3.{games[0].id[:6]}"
    assert len({g.id for g in games}) == 8
    assert spec.name == "spec" and games[4].settings.script == TINY


def test_ids_are_stable_and_depend_only_on_what_decides_the_game(tmp_path: Path) -> None:
    base = "scripts: [lighthouse-keeper]\nmodels: scripted\nembedder: none\nseeds: [0, 1]\n"
    first = [g.id for g in expand(load_spec(write(tmp_path, base)))]
    again = [g.id for g in expand(load_spec(write(tmp_path, base + "concurrency: 3\n"
                                                  "timeout_s: 60\nmetrics: [similarity]\n")))]
    other = [g.id for g in expand(load_spec(write(tmp_path, base + "rounds: 2\n")))]
    assert first == again
    assert not set(first) & set(other)


def test_fixed_murderer_and_seat_overrides_reach_the_seats(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, f"""
scripts: [{TINY}, lighthouse-keeper]
architectures: [naive, ocot]
models: scripted
murderer: {{architecture: extractive}}
seats: ["Bob=werewolf@", {{script: lighthouse-keeper, seat: "Tom Hale=scripted"}}]
embedder: none
"""))
    games = expand(spec)
    tiny = [g for g in games if g.settings.script_id == "tiny-manor"]
    assert {g.plans["Ann"].architecture for g in tiny} == {"extractive"}  # the murderer
    assert {g.plans["Bob"].architecture for g in tiny} == {"werewolf"}
    assert {g.plans["Cara"].architecture for g in tiny} == {"naive", "ocot"}
    assert all(g.settings.murderer_architecture == "extractive" for g in games)


def test_relative_paths_are_resolved_from_the_spec_folder(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tiny.yaml").write_text(Path(TINY).read_text(encoding="utf-8"),
                                                  encoding="utf-8")
    spec = load_spec(write(tmp_path / "specs", "scripts: [tiny.yaml]\nout: ../batches/one\n"
                           "wrappers: {cache: cache.sqlite}\n"))
    assert spec.scripts[0].path == str(tmp_path / "specs" / "tiny.yaml")
    assert spec.out == str(tmp_path / "batches" / "one")
    assert spec.wrappers.cache == str(tmp_path / "specs" / "cache.sqlite")


@pytest.mark.datasets
def test_a_dataset_folder_and_an_importer_give_its_scripts(tmp_path: Path,
                                                          datasets: Path) -> None:
    spec = load_spec(write(tmp_path, f"""
scripts:
  - {{dataset: {datasets / 'wellplay' / 'english'}, format: wellplay, limit: 2}}
architectures: extractive
models: scripted
"""))
    games = expand(spec)
    assert len(games) == 2 and all(g.settings.format == "wellplay" for g in games)
    assert all(Path(g.settings.script).is_dir() for g in games)


@pytest.mark.parametrize(("text", "expected"), [
    ("scripts: [lighthouse-keeper]\nmodelz: [scripted]\n", "spec.yaml: modelz: unknown field"),
    ("models: [scripted]\n", "spec.yaml: scripts: Field required"),
    ("scripts: [no-such]\n", "spec.yaml: scripts.0: no-such: (name): no bundled script"),
    ("scripts: [lighthouse-keeper]\narchitectures: [naive, wizard]\n",
     "spec.yaml: architectures.1: unknown architecture 'wizard'"),
    ("scripts: [lighthouse-keeper]\nmodels: [gpt-9]\n",
     "spec.yaml: models.0: model 'gpt-9': unknown model"),
    ("scripts: [lighthouse-keeper]\nprocedures: [marathon]\n",
     "spec.yaml: procedures.0: marathon: (name): no preset or file"),
    ("scripts: [lighthouse-keeper]\nseeds: {start: 0}\n", "spec.yaml: seeds: write a list"),
    ("scripts: [lighthouse-keeper]\nconcurrency: 0\n",
     "spec.yaml: concurrency: Input should be greater than or equal to 1"),
    ("scripts: [lighthouse-keeper]\nmetrics: [nope]\n",
     "spec.yaml: metrics.0: unknown metric 'nope'"),
    ("scripts: [{dataset: somewhere}]\n", "spec.yaml: scripts.0: a dataset needs its format"),
    ("scripts: [{path: x, format: pdf}]\n", "spec.yaml: scripts.0: unknown format 'pdf'"),
    ("scripts: [lighthouse-keeper]\nseats: [Zed=scripted]\n",
     "spec.yaml: seats.0: 'Zed=scripted': no script of this spec has that character"),
    ("scripts: [lighthouse-keeper]\nseats: [Nora Vance=human]\n",
     "spec.yaml: seats: Nora Vance would be played by a person at the keyboard"),
    ("scripts: [lighthouse-keeper]\narchitectures: [human]\n",
     "spec.yaml: architectures.0: 'human' would be played by a person at the keyboard"),
    ("scripts: [lighthouse-keeper]\nmodel_options: {api_key: sk-1}\n",
     "spec.yaml: model_options: api_key does not belong in a spec file"),
    ("scripts: [lighthouse-keeper]\nwrappers: {budget_per_game: {max_callz: 3}}\n",
     "spec.yaml: wrappers.budget_per_game.max_callz: unknown field"),
    ("scripts: [lighthouse-keeper]\nwrappers: {prices: nowhere.yaml}\n",
     "spec.yaml: wrappers.prices: no such file"),
    ("scripts: [lighthouse-keeper]\nwrappers: {retries: 3}\n",
     ("spec.yaml: wrappers: retries: a model's retries are its client's; set "
      "model_options.max_retries instead")),
    ("scripts: [lighthouse-keeper\n", "spec.yaml: (file): invalid YAML at line"),
    ("- lighthouse-keeper\n", "spec.yaml: (top level): expected a mapping"),
])
def test_a_malformed_spec_names_the_file_and_the_field(tmp_path: Path, text: str,
                                                        expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as caught:
        expand(load_spec(path))
    assert expected.replace("spec.yaml", str(path)) in str(caught.value)


def test_the_command_shows_a_bad_spec_without_a_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, "scripts: [lighthouse-keeper]\narchitectures: [wizard]\n")
    result = CliRunner().invoke(app, ["runs", "batch", str(path)])
    assert result.exit_code == 2
    assert "architectures.0: unknown architecture 'wizard'" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_dry_run_lists_the_games_and_plays_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, "scripts: [lighthouse-keeper]\nmodels: scripted\nseeds: [0, 1]\n")
    result = CliRunner().invoke(app, ["runs", "batch", str(path), "--dry-run",
                                      "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert result.output.count("lighthouse-keeper.demo.naive.scripted.s") == 2
    assert not (tmp_path / "b").exists()


def test_every_problem_of_a_spec_is_told_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, "scripts: [no-such-script, lighthouse-keeper]\n"
                           "architectures: [naive, wizard]\nseeds: many\nbogus: 1\n"
                           "procedures: [demo, marathon]\n"
                           "seats: [Zed=scripted, Yan=scripted]\n")
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    fields = [field for field, _ in caught.value.problems]
    assert fields == ["seeds", "bogus", "scripts.0", "architectures.1", "procedures.1"]


def test_every_seat_problem_of_an_expanded_spec_is_told_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, "scripts: [lighthouse-keeper]\nmodels: scripted\nseeds: [0, 1]\n"
                           "seats: [Zed=scripted, Yan=scripted, Nora Vance=human]\n")
    with pytest.raises(SpecError) as caught:
        expand(load_spec(path))
    fields = [field for field, _ in caught.value.problems]
    assert fields == ["seats.0", "seats.1"]


def test_a_batch_folder_spec_with_the_old_default_of_retries_still_reads(tmp_path: Path) -> None:
    """Every batch folder's copy of its spec holds ``wrappers.retries: 1``, no retry."""
    spec = load_spec(write(tmp_path, "scripts: [lighthouse-keeper]\nmodels: scripted\n"
                                     "wrappers: {retries: 1, prices: null}\n"))
    assert "retries" not in spec.wrappers.model_dump()

