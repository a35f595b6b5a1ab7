"""``--storage-options`` on every command that takes a URL, against moto's S3
server on 127.0.0.1, with no AWS environment variable set: the endpoint and
the credentials reach s3fs through the option alone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

import zarrpy
from tests.stores.s3_server import BUCKET, _make_bucket, _one_server_header, moto_server

pytest.importorskip("s3fs")


def _no_aws_env() -> dict[str, str]:
    """This process's environment without any ``AWS_*`` variable (the
    ``endpoint`` fixture also points HOME at an empty directory: no ``~/.aws``)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server in a thread of this process, with bucket ``BUCKET``."""
    with pytest.MonkeyPatch.context() as mp:
        for name in [k for k in os.environ if k.startswith("AWS_")]:
            mp.delenv(name)
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))  # no ~/.aws to read
        _one_server_header(mp)
        server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            url = f"http://{host}:{port}"
            _make_bucket(url)
            yield url
        finally:
            server.stop()


def options_for(endpoint_url: str) -> dict[str, Any]:
    """The documented MinIO-style options: key, secret, endpoint in client_kwargs (bounded timeouts)."""
    return {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": endpoint_url},
            "config_kwargs": {"connect_timeout": 5, "read_timeout": 10, "retries": {"max_attempts": 1}}}


def zarrpy_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m zarrpy ARGS`` as a real process, with no AWS environment variable."""
    assert not any(k.startswith("AWS_") for k in _no_aws_env())
    return subprocess.run([sys.executable, "-m", "zarrpy", *args], capture_output=True, text=True,
                          timeout=120, env=_no_aws_env())


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def local_group(tmp_path: Path) -> tuple[Path, np.ndarray]:
    data = np.arange(60, dtype="int32").reshape(6, 10)
    g = zarrpy.open_group(str(tmp_path / "local.zarr"), mode="w", attributes={"title": "t"})
    g.create_array("x", shape=data.shape, dtype=data.dtype, chunks=(3, 5))[...] = data
    return tmp_path / "local.zarr", data


def test_every_url_command_reaches_s3_through_the_option(endpoint, local_group, tmp_path):
    src, data = local_group
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/g.zarr"
    opts = json.dumps(options_for(endpoint))
    up = zarrpy_cli("cp", str(src), url, "--storage-options", opts)  # applies to DST, the URL side
    assert up.returncode == 0, up.stderr
    back = zarrpy.open_array(url, path="x", storage_options=options_for(endpoint))
    np.testing.assert_array_equal(back[...], data)

    info = zarrpy_cli("info", url, "--path", "x", "--json", "--storage-options", opts)
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["shape"] == [6, 10]
    tree = zarrpy_cli("tree", url, "--storage-options", opts)
    assert tree.returncode == 0, tree.stderr
    assert "x V3 (6, 10) int32" in tree.stdout
    verify = zarrpy_cli("verify", url, "--storage-options", opts)
    assert verify.returncode == 0 and "4 chunk(s)" in verify.stdout, verify.stderr
    consolidate = zarrpy_cli("consolidate", url, "--storage-options", opts)
    assert consolidate.returncode == 0, consolidate.stderr
    assert zarrpy.open_group(url, storage_options=options_for(endpoint)).consolidated_metadata is not None

    down = zarrpy_cli("cp", url, str(tmp_path / "down.zarr"), "--src-storage-options", opts)
    assert down.returncode == 0, down.stderr
    np.testing.assert_array_equal(zarrpy.open_array(str(tmp_path / "down.zarr"), path="x")[...], data)


def test_migrate_over_s3_and_options_from_a_file(endpoint, local_group, tmp_path):
    src, data = local_group
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/v2.zarr"
    options_file = tmp_path / "s3.json"
    options_file.write_text(json.dumps(options_for(endpoint)))
    up = zarrpy_cli("cp", str(src), url, "--zarr-format", "2", "--dst-storage-options", f"@{options_file}")
    assert up.returncode == 0, up.stderr
    migrated = zarrpy_cli("migrate", url, "--storage-options", f"@{options_file}")
    assert migrated.returncode == 0, migrated.stderr
    assert "wrote zarr.json for 2 node(s)" in migrated.stdout
    again = zarrpy_cli("migrate", url, "--remove-v2", "--storage-options", f"@{options_file}")
    assert again.returncode == 0 and "removed" in again.stdout, again.stderr
    done = zarrpy_cli("migrate", url, "--storage-options", f"@{options_file}")
    assert done.returncode == 0 and "already Zarr V3" in done.stdout, done.stderr
    a = zarrpy.open_array(url, path="x", storage_options=options_for(endpoint))
    assert a.zarr_format == 3
    np.testing.assert_array_equal(a[...], data)


def test_s3_to_s3_takes_one_option_for_both_sides_and_a_side_option_wins(endpoint, local_group):
    src, data = local_group
    first = f"s3://{BUCKET}/{uuid.uuid4().hex}/a.zarr"
    second = f"s3://{BUCKET}/{uuid.uuid4().hex}/b.zarr"
    good = json.dumps(options_for(endpoint))
    assert zarrpy_cli("cp", str(src), first, "--storage-options", good).returncode == 0
    both = zarrpy_cli("cp", first, second, "--storage-options", good)
    assert both.returncode == 0, both.stderr
    np.testing.assert_array_equal(
        zarrpy.open_array(second, path="x", storage_options=options_for(endpoint))[...], data)
    # The destination's own option replaces the shared one there: a closed port, so the copy fails.
    dead = json.dumps(options_for(f"http://127.0.0.1:{_closed_port()}"))
    third = f"s3://{BUCKET}/{uuid.uuid4().hex}/c.zarr"
    failed = zarrpy_cli("cp", first, third, "--storage-options", good, "--dst-storage-options", dead)
    assert failed.returncode == 1 and failed.stderr.startswith("zarrpy: error: "), failed.stderr
    assert "Traceback" not in failed.stderr


def test_the_endpoint_comes_from_the_option(endpoint, local_group):
    """The same command with the endpoint changed fails: nothing else tells s3fs where the server is."""
    src, _ = local_group
    url = f"s3://{BUCKET}/{uuid.uuid4().hex}/g.zarr"
    assert zarrpy_cli("cp", str(src), url, "--storage-options", json.dumps(options_for(endpoint))).returncode == 0
    dead = json.dumps(options_for(f"http://127.0.0.1:{_closed_port()}"))
    proc = zarrpy_cli("info", url, "--storage-options", dead)
    assert proc.returncode == 1 and proc.stderr.startswith("zarrpy: error: "), proc.stderr
