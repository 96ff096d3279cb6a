"""The messages and gRPC stubs of ``denoc/v1/dynamics.proto`` (``dynamics_pb2``, ``dynamics_pb2_grpc`` and
their ``.pyi``), written by the system ``protoc`` and ``grpc_python_plugin`` when the package is built
(``setup.py``); they are not in the source tree."""
