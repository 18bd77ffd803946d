"""The repository is ready to be hosted on Streamlit Community Cloud (README section "Hosting
on Streamlit Community Cloud").

What Community Cloud needs (from its documentation): the entrypoint file (``app.py``), a
dependency file it recognises (``requirements.txt`` at the root; ``uv.lock``, ``Pipfile`` and
``environment.yml`` would take precedence over it, so there must be none), the configuration at
``.streamlit/config.toml`` in the root, and, when the app uses them, secrets pasted in the deploy
dialog. The Python version is chosen in the deploy dialog ("Advanced settings"; default 3.12);
Community Cloud reads no ``runtime.txt`` or ``.python-version`` file, so the repository has none
and the README says which version to pick.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("app_pages", "dashboard", "deid_core")
LOCAL_PACKAGES = {"app_pages", "dashboard", "deid_core"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)$")


def runtime_sources() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in SOURCE_DIRS:
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


#: Optional dependencies the hosted app does not need (the Spark engine, imported only when
#: asked for), pinned in their own file.
OPTIONAL_REQUIREMENTS = ("requirements-spark.txt",)


def requirements(name: str = "requirements.txt") -> dict[str, str]:
    pins = {}
    for raw in (ROOT / name).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-r "):
            continue
        match = PIN.match(line)
        assert match, f"{name}: '{line}' is not pinned exactly (name==version)"
        pins[match.group(1).lower().replace("_", "-")] = match.group(2)
    return pins


def test_requirements_at_the_root_are_pinned_exactly():
    pins = requirements()
    assert {"streamlit", "pandas", "numpy"} <= set(pins)


def test_the_installed_packages_are_the_pinned_ones():
    """The tests run against exactly what Community Cloud will install."""
    for name, pinned in requirements().items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            pytest.fail(f"{name} is pinned in requirements.txt but not installed")
        assert installed == pinned, f"{name}: installed {installed}, pinned {pinned}"


def third_party_imports() -> set[str]:
    names = set()
    for path in runtime_sources():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {
        name for name in names if name not in sys.stdlib_module_names and name not in LOCAL_PACKAGES
    }


def test_every_imported_package_is_a_pinned_requirement():
    """Importable names match: each third-party module the app imports comes from a pinned
    distribution (directly; a module only a dependency provides would break when it moves), in
    requirements.txt or, for an optional engine, in its own requirements file."""
    pins = requirements()
    for optional in OPTIONAL_REQUIREMENTS:
        pins |= requirements(optional)
    providers = packages_distributions()
    for module in sorted(third_party_imports()):
        distributions = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        assert distributions, f"'{module}' is imported but no installed package provides it"
        assert distributions & set(pins), (
            f"'{module}' (from {sorted(distributions)}) is imported but not in requirements.txt"
        )


def test_optional_engines_stay_out_of_the_hosted_requirements():
    """pyspark (and the Java it needs) is for the Spark engine only: the hosted app does not
    install it, and the core imports it only inside the functions that start Spark."""
    assert "pyspark" not in requirements()
    assert "pyspark" in requirements("requirements-spark.txt")
    for path in runtime_sources():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:  # module level only
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                assert not any(n.startswith("pyspark") for n in names), path


def test_every_pinned_requirement_is_importable():
    providers = packages_distributions()
    provided = {d.lower().replace("_", "-") for ds in providers.values() for d in ds}
    for name in requirements():
        assert name in provided, f"{name} is pinned but provides no importable module"


def test_no_other_dependency_file_shadows_requirements_txt():
    """Community Cloud uses the first of uv.lock, Pipfile, environment.yml, requirements.txt,
    pyproject.toml it finds (next to the entrypoint, then at the root)."""
    for name in ("uv.lock", "Pipfile", "environment.yml", "environment.yaml"):
        assert not (ROOT / name).exists(), f"{name} would be used instead of requirements.txt"
    assert (ROOT / "requirements.txt").is_file()


def test_config_at_the_root_is_private_by_default():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False
    assert config["server"]["enableXsrfProtection"] is True
    assert config["client"]["showErrorDetails"] == "none"
    # ... and again from the script, since Community Cloud overrides the file's value.
    assert 'st.set_option("client.showErrorDetails", "none")' in (ROOT / "app.py").read_text()
    assert 0 < config["server"]["maxUploadSize"] <= 200


def test_streamlit_does_not_collect_garbage_after_every_run_the_app_does_now_and_then():
    """A full collection after every script run (fragment polls included) held the GIL most
    of the time beside two heavy sessions (issue 31, item 4): off, and app.py collects at the
    end of a page run at most every 30 s (dashboard.resources.collect_garbage)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
    assert "resources.collect_garbage()" in (ROOT / "app.py").read_text()


def test_no_python_version_file_is_needed_and_the_docs_say_which_to_choose():
    """Community Cloud picks Python in the deploy dialog; a runtime.txt would be ignored."""
    assert not (ROOT / "runtime.txt").exists()
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires.startswith(">=3.")
    minimum = tuple(int(part) for part in requires.removeprefix(">=").split("."))
    assert sys.version_info[:2] >= minimum
    readme = (ROOT / "README.md").read_text()
    hosting = readme[readme.index("## Hosting on Streamlit Community Cloud") :]
    assert "Advanced settings" in hosting and "Python version" in hosting
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in hosting


def test_app_py_is_the_entrypoint_and_its_pages_exist():
    source = (ROOT / "app.py").read_text()
    assert "st.navigation(" in source
    for page in re.findall(r'st\.Page\(\s*"([^"]+)"', source):
        assert (ROOT / page).is_file(), page


def test_no_secrets_are_needed():
    for path in runtime_sources():
        text = path.read_text()
        assert "st.secrets" not in text, path
        assert "secrets.toml" not in text, path
    assert not (ROOT / ".streamlit" / "secrets.toml").exists()


def test_the_app_starts_on_the_demo_without_secrets():
    from streamlit.testing.v1 import AppTest

    sys.path.insert(0, str(ROOT))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    assert len(at.secrets) == 0
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    from dashboard.state import GENERIC_ERROR

    assert not [e.value for e in at.error if GENERIC_ERROR in e.value]
    assert not any("secret" in e.value.lower() for e in at.error)
    records = [m.value for m in at.sidebar.metric if m.label == "Records"]
    assert records and records[0] not in ("", "0")


def test_no_page_load_asks_another_server_for_the_icon():
    """A Material icon name or an emoji as the page icon makes the browser fetch it from an
    outside server on every load; the icon is inline SVG (a data: URL) instead."""
    source = (ROOT / "app.py").read_text()
    call = source[source.index("st.set_page_config(") :]
    icon = re.search(r"page_icon=([^,\n]+)", call).group(1)
    assert icon.strip() == "PAGE_ICON"
    from dashboard.hosting import PAGE_ICON

    assert PAGE_ICON.startswith("<svg ") and "href" not in PAGE_ICON


def test_sessions_do_not_watch_source_files():
    """Each session's source watcher resolved the path of every imported module on the
    server's event loop, stalling the health check while sessions started."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    assert config["server"]["runOnSave"] is False


def test_serve_py_puts_the_security_headers_in_front_of_the_app():
    tree = ast.parse((ROOT / "serve.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    app = next(c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == "App")
    assert ast.literal_eval(app.args[0]) == "app.py"
    assert "SecurityHeaders" in ast.unparse(app)


def test_security_headers_forbid_framing_and_outside_images():
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from dashboard.hosting import SECURITY_HEADERS, SecurityHeaders

    async def page(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    sent = []

    async def send(message):
        sent.append(message)

    # In a thread of its own: the browser tests' Playwright loop may still run in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, SecurityHeaders(page)({"type": "http"}, None, send)).result()
    headers = {k.decode(): v.decode() for k, v in sent[0]["headers"]}
    assert headers == {name.lower(): value for name, value in SECURITY_HEADERS.items()}
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'self'" in policy and "img-src 'self' data: blob:" in policy
    assert headers["x-frame-options"] == "SAMEORIGIN"


def test_app_py_serves_itself_behind_the_security_headers():
    """``streamlit run app.py`` (Community Cloud) finds an st.App in the file and serves it:
    the same page script behind SecurityHeaders; as the page script (__main__) it runs the
    page instead."""
    tree = ast.parse((ROOT / "app.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    app = next(c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == "App")
    assert ast.literal_eval(app.args[0]) == "app.py"
    assert "SecurityHeaders" in ast.unparse(app)
    guard = next(
        n for n in tree.body if isinstance(n, ast.If) and "__name__" in ast.unparse(n.test)
    )
    assert ast.unparse(guard.test) == "__name__ == '__main__'"
    assert "run_page_script()" in ast.unparse(guard.body[0])
    assert any("st.App" in ast.unparse(statement) for statement in guard.orelse)


def test_scripts_may_come_from_the_app_only():
    """script-src names the app itself and the hash of each inline script of the page
    Streamlit serves, never 'unsafe-inline' nor another site."""
    import base64
    import hashlib
    import re

    import streamlit

    from dashboard.hosting import SECURITY_HEADERS

    policy = SECURITY_HEADERS["Content-Security-Policy"]
    scripts = next(p.strip() for p in policy.split(";") if p.strip().startswith("script-src"))
    assert scripts.startswith("script-src 'self' ")
    assert "'unsafe-inline'" not in scripts and "http" not in scripts and "*" not in scripts
    page = (Path(streamlit.__file__).parent / "static" / "index.html").read_text()
    inline = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    for code in inline:
        digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in scripts
