"""buf.gen.yaml's Python and Java generation, checked by what each produces.

Python: buf's output is the committed code (proto/generate.sh's), byte for byte for the stubs and
type stubs; the messages' descriptors are the same but for the json_name buf's compiler fills in.
Java: the generated classes compile with javac against protobuf-java, and a small program built
on them reads a request the Python client serialized, writes it back byte for byte, and builds an
EvaluateArrangementRequest that the real server answers exactly as it answers Python's.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor

from cpsettle.v1 import settlement_pb2 as pb
from cpsettle_client.client import SettlementClient, request_from_json
from tests.conftest import ServerHandle
from tests.support.buf_gen import generate

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "proto" / "cpsettle" / "v1"
TABLE = ROOT / "examples" / "tables" / "one-six.json"

# Debian's protobuf-compiler and libprotobuf-java: the same release on both sides, as protobuf's
# Java runtime requires of generated code (the registry of Java packages is not reachable here).
PROTOC = Path("/usr/bin/protoc")
PROTOBUF_JAR = Path("/usr/share/java/protobuf.jar")


def serialized_descriptor(module: Path) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto a generated *_pb2.py registers, json_name cleared throughout."""
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "AddSerializedFile":
            data = node.args[0]
            assert isinstance(data, ast.Constant) and isinstance(data.value, bytes)
            proto = descriptor_pb2.FileDescriptorProto.FromString(data.value)
            messages = list(proto.message_type)
            while messages:
                message = messages.pop()
                messages.extend(message.nested_type)
                for field in [*message.field, *message.extension]:
                    field.ClearField("json_name")
            return proto
    raise AssertionError(f"{module.name} registers no serialized file")


def test_bufs_python_is_the_committed_code(tmp_path: Path) -> None:
    fresh = generate("python", tmp_path) / "cpsettle" / "v1"
    committed = sorted(COMMITTED.glob("*_pb2*.py*"))
    assert sorted(p.name for p in fresh.glob("*_pb2*.py*")) == [p.name for p in committed]
    for old in committed:
        new = fresh / old.name
        if old.name.endswith("_pb2.py"):
            assert serialized_descriptor(new) == serialized_descriptor(old), old.name
        else:
            assert new.read_bytes() == old.read_bytes(), old.name


def java_import_prefix(file: FileDescriptor) -> str:
    """Where protoc's Java generator puts a .proto file's messages, from its options."""
    options = file.GetOptions()
    assert isinstance(options, descriptor_pb2.FileOptions)
    package: str = options.java_package or file.package
    if options.java_multiple_files:
        return package
    stem = Path(file.name).stem
    outer = options.java_outer_classname or "".join(
        part[:1].upper() + part[1:] for part in stem.replace("-", "_").split("_")
    )
    if not options.java_outer_classname and (
        outer in file.message_types_by_name
        or outer in file.enum_types_by_name
        or outer in file.services_by_name
    ):
        outer += "OuterClass"
    return f"{package}.{outer}"


@pytest.fixture(scope="module")
def java_program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """`java -cp … ContractCheck`, compiled against freshly generated classes."""
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("no JDK (javac, java) on this machine")
    if not (PROTOC.exists() and PROTOBUF_JAR.exists()):
        pytest.skip(
            "Debian's protobuf-compiler and libprotobuf-java are not installed "
            "(.ci/run installs them)"
        )
    work = tmp_path_factory.mktemp("java")
    sources = generate("java", work, protoc_path=str(PROTOC))
    # google.rpc.Status (SettleStream's item errors): a Java team takes it from
    # com.google.api.grpc:proto-google-common-protos; Maven Central is out of reach here, so the
    # same classes are generated from the vendored googleapis protos, with the same protoc.
    rpc = subprocess.run(
        [
            str(PROTOC),
            "-I",
            str(ROOT / "third_party" / "googleapis"),
            f"--java_out={sources}",
            "google/rpc/status.proto",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rpc.returncode == 0, rpc.stderr
    check = (ROOT / "tests" / "contract" / "java" / "ContractCheck.java.in").read_text()
    main = sources / "ContractCheck.java"
    main.write_text(check.replace("@SETTLEMENT@", java_import_prefix(pb.DESCRIPTOR)))
    classes = work / "classes"
    done = subprocess.run(
        [
            "javac",
            "-nowarn",
            "-encoding",
            "UTF-8",
            "-cp",
            str(PROTOBUF_JAR),
            "-d",
            str(classes),
            *map(str, sources.rglob("*.java")),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return ["java", "-cp", f"{classes}:{PROTOBUF_JAR}", "ContractCheck"]


def test_java_reads_and_builds_messages_the_server_understands(
    java_program: list[str], server: ServerHandle, tmp_path: Path
) -> None:
    request = request_from_json(TABLE.read_text())
    (tmp_path / "request.bin").write_bytes(request.SerializeToString())
    priced = pb.SettleRequest()
    priced.CopyFrom(request)
    priced.currency = "JPY"
    with SettlementClient(server.address, timeout=10) as client:
        settlement = client.settle(priced).settlement
    (tmp_path / "settlement.bin").write_bytes(settlement.SerializeToString())
    done = subprocess.run(
        [*java_program, str(tmp_path), request.hand_id], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Java reads the Timestamp as the instant the server issued it at, and the currency
    issued_ms = settlement.issued_at.seconds * 1000 + settlement.issued_at.nanos // 1_000_000
    assert f"issued {issued_ms} currency JPY" in done.stdout
    assert (tmp_path / "request-again.bin").read_bytes() == request.SerializeToString()

    from_java = pb.EvaluateArrangementRequest.FromString((tmp_path / "evaluate.bin").read_bytes())
    from_python = pb.EvaluateArrangementRequest(
        preset=request.preset, arrangement=request.players[0].arrangement
    )
    assert from_java == from_python
    with SettlementClient(server.address, timeout=10) as client:
        answer = client.evaluate(from_java)
        assert answer == client.evaluate(from_python)
    assert [list(row.cards) for row in answer.rows] == [
        list(request.players[0].arrangement.front),
        list(request.players[0].arrangement.middle),
        list(request.players[0].arrangement.back),
    ]
