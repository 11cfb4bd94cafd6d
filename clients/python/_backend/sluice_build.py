"""The build backend of the sluice package (PEP 517 and PEP 660), with
the standard library only.

pip builds a package in an isolated environment into which it installs
the backend the package asks for; setuptools, the usual one, would come
from an index, which an offline machine cannot reach. This backend asks
for nothing: it reads pyproject.toml's [project] table (tomllib), and
writes the wheel (a zip of the package's .py files and its .dist-info)
or the source archive itself. It knows what this package needs and no
more: pure Python, no compiled code, no scripts.
"""

import base64
import hashlib
import io
import os
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        data = tomllib.load(f)
    return data["project"], data["tool"]["sluice-build"]


def _tag():
    p, _ = _project()
    return "%s-%s" % (p["name"], p["version"])


def _metadata():
    p, _ = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"],
             "Version: " + p["version"], "Summary: " + p["description"],
             "Requires-Python: " + p["requires-python"]]
    lines += ["Classifier: " + c for c in p.get("classifiers", [])]
    with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
        readme = f.read()
    lines += ["Description-Content-Type: text/markdown", "", readme]
    return "\n".join(lines).encode()


_WHEEL = b"""Wheel-Version: 1.0
Generator: sluice_build
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _sources():
    """(path in the wheel, path on disk) of the packages' .py files."""
    _, tool = _project()
    for pkg in tool["packages"]:
        base = os.path.join(ROOT, pkg)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    full = os.path.join(dirpath, name)
                    yield os.path.relpath(full, ROOT).replace(os.sep,
                                                              "/"), full


def _write_wheel(directory, files):
    """Writes a wheel of files ((name, bytes) pairs) plus its
    .dist-info; returns its file name."""
    info = _tag() + ".dist-info"
    files = list(files) + [(info + "/METADATA", _metadata()),
                           (info + "/WHEEL", _WHEEL)]
    record = []
    name = _tag() + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), data)
            digest = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
        record.append(info + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(info + "/RECORD", (2020, 1, 1, 0, 0, 0)),
                   "\n".join(record) + "\n")
    return name


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory,
                                     config_settings=None):
    info = _tag() + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in (("METADATA", _metadata()), ("WHEEL", _WHEEL)):
        with open(os.path.join(metadata_directory, info, name), "wb") as f:
            f.write(data)
    return info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _write_wheel(wheel_directory, ((path, _read(full))
                                          for path, full in _sources()))


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    """A wheel whose .pth puts this source directory on sys.path."""
    return _write_wheel(wheel_directory, [("sluice.pth",
                                           (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name = _tag() + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md",
                    "_backend/sluice_build.py"] + [
                p for p, _ in _sources()]:
            data = _read(os.path.join(ROOT, rel))
            ti = tarfile.TarInfo(_tag() + "/" + rel)
            ti.size, ti.mtime, ti.mode = len(data), 1577836800, 0o644
            t.addfile(ti, io.BytesIO(data))
        pkg = b"Metadata-Version: 2.1\nName: sluice\nVersion: %s\n" % (
            _project()[0]["version"].encode())
        ti = tarfile.TarInfo(_tag() + "/PKG-INFO")
        ti.size, ti.mtime, ti.mode = len(pkg), 1577836800, 0o644
        t.addfile(ti, io.BytesIO(pkg))
    return name
