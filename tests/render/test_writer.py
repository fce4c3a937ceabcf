from __future__ import annotations

import json
from pathlib import Path

import pytest

from archform.render import writer
from archform.render.writer import (
    MANIFEST,
    EditedFilesError,
    GeneratedFile,
    NotGeneratedDirError,
    write_tree,
)


def files(version: str) -> list[GeneratedFile]:
    return [
        GeneratedFile.text("a.txt", f"a {version}\n"),
        GeneratedFile.text("sub/b.py", f"B = {version!r}\n"),
        GeneratedFile.text("run.sh", "#!/bin/sh\n", mode=0o755),
    ]


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_writes_tree_with_manifest_and_modes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = write_tree(out, files("1"))
    assert sorted(report.written) == ["a.txt", "run.sh", "sub/b.py"]
    manifest = json.loads((out / MANIFEST).read_text())
    assert set(manifest["files"]) == {"a.txt", "run.sh", "sub/b.py"}
    assert (out / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not [p for p in tmp_path.iterdir() if p.name != "out"], "temp dirs left behind"


def test_rerun_is_idempotent_and_reports_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, files("1"))
    before = snapshot(out)
    report = write_tree(out, files("1"))
    assert report.written == [] and len(report.unchanged) == 3
    assert snapshot(out) == before


def test_edited_file_is_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, files("1"))
    (out / "sub" / "b.py").write_text("B = 'mine'\n")
    with pytest.raises(EditedFilesError) as info:
        write_tree(out, files("2"))
    assert info.value.paths == ["sub/b.py"]
    assert (out / "sub" / "b.py").read_text() == "B = 'mine'\n"
    assert (out / "a.txt").read_text() == "a 1\n", "nothing else may change either"
    write_tree(out, files("2"), force=True)
    assert (out / "sub" / "b.py").read_text() == "B = '2'\n"


def test_user_added_files_are_kept_and_removed_outputs_deleted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, files("1"))
    (out / "notes.md").write_text("mine\n")
    report = write_tree(out, files("2")[:2])
    assert report.removed == ["run.sh"] and report.kept_user_files == ["notes.md"]
    assert (out / "notes.md").read_text() == "mine\n"
    assert not (out / "run.sh").exists()


def test_refuses_foreign_nonempty_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("precious\n")
    with pytest.raises(NotGeneratedDirError):
        write_tree(out, files("1"))
    assert (out / "thesis.tex").read_text() == "precious\n"


def test_interrupted_generation_leaves_previous_output_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    write_tree(out, files("1"))
    before = snapshot(out)
    calls = {"n": 0}
    real_write = Path.write_bytes

    def dying_write(self: Path, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt("killed mid-generation")
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", dying_write)
    with pytest.raises(KeyboardInterrupt):
        write_tree(out, files("2"))
    monkeypatch.undo()
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_crash_between_renames_is_recovered(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, files("1"))
    before = snapshot(out)
    # Simulate a crash after moving the old tree aside but before the new one moved in.
    out.rename(out.with_name("out" + writer._BACKUP_SUFFIX))
    write_tree(out, files("1"))
    assert snapshot(out) == before


def test_rejects_paths_escaping_the_tree(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_tree(tmp_path / "out", [GeneratedFile.text("../evil", "x")])
    with pytest.raises(ValueError):
        write_tree(tmp_path / "out", [GeneratedFile.text("/etc/passwd", "x")])


@pytest.mark.parametrize("same_bytes", [True, False], ids=["link-to-same-bytes", "link-to-edit"])
def test_a_symlink_at_a_generated_path_is_a_user_change(tmp_path: Path, same_bytes: bool) -> None:
    """Issue 24: a link to the user's edited copy was silently replaced ("0 written")."""
    out = tmp_path / "out"
    write_tree(out, files("1"))
    mine = tmp_path / "my-a.txt"
    mine.write_text("a 1\n" if same_bytes else "a mine\n")
    (out / "a.txt").unlink()
    (out / "a.txt").symlink_to(mine)
    with pytest.raises(EditedFilesError) as info:
        write_tree(out, files("1"))
    assert info.value.paths == ["a.txt"]
    assert (out / "a.txt").is_symlink() and (out / "a.txt").readlink() == mine


def test_a_folder_or_fifo_at_a_generated_path_is_a_user_change(tmp_path: Path) -> None:
    import os

    out = tmp_path / "out"
    write_tree(out, files("1"))
    (out / "a.txt").unlink()
    (out / "a.txt").mkdir()
    (out / "run.sh").unlink()
    os.mkfifo(out / "run.sh")
    with pytest.raises(EditedFilesError) as info:
        write_tree(out, files("2"))
    assert info.value.paths == ["a.txt", "run.sh"]
    assert (out / "a.txt").is_dir()
