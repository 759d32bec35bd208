#!/bin/sh
# generate.sh OUT writes the code generated from api/longfair/v1/*.proto
# under OUT (the api folder itself for `make proto`; a scratch folder for
# the test that checks the committed code is current): the Go messages and
# gRPC stubs, their generated binary codec and copies (vtprotobuf), their
# generated JSON encoding (protoc-gen-go-pbjson, ours: built here from
# internal/pbjson), their generated string escaping (protoc-gen-go-escape,
# ours too: internal/pbescape), the JSON/HTTP gateway and its OpenAPI
# document. Run it from the repository root with PROTO_PLUGINS naming the
# folder of the pinned plugins (`make proto` installs them there).
set -eu
out=${1:?usage: api/generate.sh OUT}
plugins=${PROTO_PLUGINS:?set PROTO_PLUGINS to the folder of the protoc plugins}
mkdir -p "$out/longfair/v1"
own=$(mktemp -d)
trap 'rm -rf "$own"' EXIT
go build -o "$own/protoc-gen-go-pbjson" ./internal/pbjson/protoc-gen-go-pbjson
go build -o "$own/protoc-gen-go-escape" ./internal/pbescape/protoc-gen-go-escape
protoc -I api -I /usr/include \
	--plugin=protoc-gen-go="$plugins/protoc-gen-go" \
	--plugin=protoc-gen-go-grpc="$plugins/protoc-gen-go-grpc" \
	--plugin=protoc-gen-grpc-gateway="$plugins/protoc-gen-grpc-gateway" \
	--plugin=protoc-gen-openapiv2="$plugins/protoc-gen-openapiv2" \
	--plugin=protoc-gen-go-vtproto="$plugins/protoc-gen-go-vtproto" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	--go-vtproto_out="$out" --go-vtproto_opt=paths=source_relative,features=marshal+unmarshal+size+clone \
	--plugin=protoc-gen-go-pbjson="$own/protoc-gen-go-pbjson" \
	--go-pbjson_out="$out" --go-pbjson_opt=paths=source_relative \
	--plugin=protoc-gen-go-escape="$own/protoc-gen-go-escape" \
	--go-escape_out="$out" --go-escape_opt=paths=source_relative \
	--grpc-gateway_out="$out" --grpc-gateway_opt=paths=source_relative \
	--grpc-gateway_opt=grpc_api_configuration=api/longfair/v1/http.yaml \
	--openapiv2_out="$out/longfair/v1" \
	--openapiv2_opt=grpc_api_configuration=api/longfair/v1/http.yaml \
	--openapiv2_opt=allow_merge=true,merge_file_name=longfair \
	--openapiv2_opt=openapi_configuration=api/longfair/v1/openapi.yaml \
	--openapiv2_opt=json_names_for_fields=false \
	api/longfair/v1/*.proto
