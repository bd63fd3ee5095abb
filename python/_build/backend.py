"""A minimal PEP 517 / PEP 660 build backend for the chatfmt binding.

Standard library only, so `pip install ./python` works offline and without
setuptools or wheel. The package is Python plus, when `make python-ext` built
it, its optional C render path (chatfmt/_speedups*.so); the wheel bundles the
already-built shared library when one is found ($CHATFMT_LIBRARY, else
../build/libchatfmt.so beside this directory) and is then tagged for this
platform, otherwise it is `py3-none-any` and the package uses the system's
library at run time.
"""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # python/
PACKAGE = "chatfmt"
LIBNAME = "libchatfmt.so"


def _project():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib
        return tomllib.loads(text)["project"]
    except ImportError:   # Python < 3.11: the few plain `key = "value"` lines we need
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]*)"', section, re.M))


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project.get('description', '')}"]
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for c in project.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _bundled_library():
    path = os.environ.get("CHATFMT_LIBRARY") or os.path.join(os.path.dirname(ROOT), "build", LIBNAME)
    return os.path.realpath(path) if os.path.isfile(path) else None


def _package_files():
    pkg = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(pkg)):
        # the C render path, when `make python-ext` built it for this Python
        speedups = name.startswith("_speedups") and name.endswith(sysconfig.get_config_var("EXT_SUFFIX") or ".so")
        if name.endswith(".py") or speedups:
            yield f"{PACKAGE}/{name}", os.path.join(pkg, name)


class _Wheel:
    """A wheel being written: files plus the RECORD of their hashes."""

    def __init__(self, directory, project, tag):
        self.dist = f"{project['name'].replace('-', '_')}-{project['version']}"
        self.name = f"{self.dist}-{tag}.whl"
        self.path = os.path.join(directory, self.name)
        self.zip = zipfile.ZipFile(self.path, "w", zipfile.ZIP_DEFLATED)
        self.record = []
        self.project = project
        self.tag = tag

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def add_file(self, arcname, path, mode=0o644):
        with open(path, "rb") as f:
            self.add(arcname, f.read(), mode)

    def close(self):
        info = f"{self.dist}.dist-info"
        self.add(f"{info}/METADATA", _metadata(self.project).encode())
        self.add(f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: chatfmt-backend\n"
                                   f"Root-Is-Purelib: {'true' if self.tag.endswith('-any') else 'false'}\n"
                                   f"Tag: {self.tag}\n").encode())
        self.add(f"{info}/top_level.txt", f"{PACKAGE}\n".encode())
        self.record.append(f"{info}/RECORD,,")
        self.zip.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0)),
                          "\n".join(self.record) + "\n")
        self.zip.close()
        return self.name


def _platform_tag():
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


# ---- PEP 517 ----

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    library = _bundled_library()
    files = list(_package_files())
    native = library or any(path.endswith(".so") for _, path in files)
    wheel = _Wheel(wheel_directory, _project(), _platform_tag() if native else "py3-none-any")
    for arcname, path in files:
        wheel.add_file(arcname, path, 0o755 if path.endswith(".so") else 0o644)
    if library:
        wheel.add_file(f"{PACKAGE}/{LIBNAME}", library, 0o755)
    return wheel.close()


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a .pth file puts python/ on sys.path; the package then finds
    the repository's build/ library itself."""
    wheel = _Wheel(wheel_directory, _project(), "py3-none-any")
    wheel.add(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode())
    return wheel.close()


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{project['name']}-{project['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for top in ("pyproject.toml", "README.md", "_build", PACKAGE, "tests"):
            path = os.path.join(ROOT, top)
            if os.path.exists(path):
                tar.add(path, arcname=f"{base}/{top}",
                        filter=lambda ti: None if "__pycache__" in ti.name or ti.name.endswith(".so") else ti)
        pkg_info = _metadata(project).encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
