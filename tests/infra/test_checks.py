"""The house checks (midnight_env.infra.checks): each names the value and what is allowed."""

import math

import numpy as np
import pytest

from midnight_env.infra import checks


class Refused(ValueError):
    pass


@pytest.mark.parametrize("value, message", [
    (-1, "seed -1 is out of range: allowed are integers 0..9"),
    (10, "seed 10 is out of range: allowed are integers 0..9"),
    (2.5, "seed 2.5 is not a whole number: allowed are integers 0..9"),
    (2.0, "seed 2.0 is a float, not an integer: allowed are integers 0..9"),
    (True, "seed True is not an integer: allowed are integers 0..9"),
    ("3", "seed '3' is not an integer: allowed are integers 0..9"),
    (math.nan, "seed nan is not a whole number: allowed are integers 0..9"),
])
def test_integer_refuses_by_name(value, message):
    with pytest.raises(Refused) as refused:
        checks.integer("seed", value, 0, 9, error=Refused)
    assert str(refused.value) == message


def test_integer_accepts_numpy_and_names_settings_and_flags():
    assert checks.integer("games", np.int64(7), 1) == 7
    assert type(checks.integer("games", np.int64(7), 1)) is int
    with pytest.raises(ValueError, match=r"^epochs=0 is out of range: allowed are integers 1 or more$"):
        checks.integer("epochs=", 0, 1)
    with pytest.raises(ValueError, match=r"^--games 0 is out of range: allowed are 1 or more games$"):
        checks.integer("--games", 0, 1, allowed="1 or more games")


def test_integers_names_the_first_value_outside():
    values = np.array([[1, 7], [-2, 9]])
    assert checks.integers("seat", values, -2, 9) is values
    assert checks.integers("seat", np.array([], np.int64), 0, 1).size == 0
    with pytest.raises(Refused, match=r"^seat 7 is out of range: allowed are 0\.\.3$"):
        checks.integers("seat", values, 0, 3, allowed="0..3", error=Refused)
    with pytest.raises(ValueError, match=r"^game index -2 is out of range: allowed are integers 0 or more$"):
        checks.integers("game index", values, 0)


def test_number_ranges_and_open_ends():
    assert checks.number("lr", 0.5, 0, 1, low_open=True) == 0.5
    for bad in (0, math.nan, math.inf, 1.5):
        with pytest.raises(ValueError, match=r"out of range: allowed are numbers in \(0, 1\]"):
            checks.number("lr", bad, 0, 1, low_open=True)
    with pytest.raises(ValueError, match=r"^lr 'x' is not a number"):
        checks.number("lr", "x", 0)
    with pytest.raises(ValueError, match=r"^gamma=True is not a number"):
        checks.number("gamma=", True, 0, 1)


def test_choice_lists_the_options():
    assert checks.choice("variant", "hidden_castle", ["midnight_party", "hidden_castle"]) == "hidden_castle"
    with pytest.raises(ValueError) as refused:
        checks.choice("variant", "chess", ["midnight_party", "hidden_castle"])
    assert str(refused.value) == "variant 'chess' is not allowed: allowed are midnight_party, hidden_castle"


def test_path_kinds_and_folder_bounds(tmp_path):
    afile = tmp_path / "a.json"
    afile.write_text("{}")
    assert checks.path("--model", afile) == afile
    with pytest.raises(ValueError, match="does not exist: allowed are the path of an existing file"):
        checks.path("--model", tmp_path / "missing.json")
    assert checks.path("--out", tmp_path / "new", must_exist=False, kind="folder") == tmp_path / "new"
    with pytest.raises(ValueError, match="is not a folder"):
        checks.path("--out", afile, kind="folder")
    with pytest.raises(ValueError, match="is not a regular file"):
        checks.path("--model", tmp_path)
    inside = tmp_path / "data"
    inside.mkdir()
    (inside / "escape").symlink_to(afile)
    with pytest.raises(ValueError, match="outside"):
        checks.path("file", inside / "escape", inside=inside)
    with pytest.raises(ValueError, match="is not a path"):
        checks.path("--model", 3)


def test_integer_takes_the_value_of_a_zero_dimensional_array():
    assert checks.integer("action", np.array(27), 0, 508) == 27
    with pytest.raises(ValueError, match=r"^action 2.5 is not a whole number"):
        checks.integer("action", np.array(2.5), 0, 508)
    with pytest.raises(ValueError, match=r"is not an integer"):
        checks.integer("action", np.array([1, 2]), 0, 508)
    with pytest.raises(ValueError, match=r"is not an integer"):
        checks.integer("action", np.bool_(True), 0, 508)
