# The employees service: a release build of employees-server, the same build
# that `make run` does. Used by docker-compose.yml.

FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq-dev libmicrohttpd-dev zlib1g-dev libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# The flags of `make build` (Makefile, release_flags: why each).
ARG RELEASE_FLAGS="--static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xlinker --no-export-dynamic \
 -Xswiftc -use-ld=lld"
RUN swift build -c release $RELEASE_FLAGS --product employees-server \
 && cp "$(swift build -c release $RELEASE_FLAGS --show-bin-path)/employees-server" /usr/local/bin/

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq5 libmicrohttpd12 libssl3 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/employees-server /usr/local/bin/employees-server
EXPOSE 8080
USER nobody
# The database comes from the environment: DATABASE_URL (as docker-compose.yml
# sets it) or libpq's PG* variables; the other options have environment
# variables too (EMPLOYEES_PORT, LOG_LEVEL, ...: employees-server --help).
ENTRYPOINT ["/usr/local/bin/employees-server"]
CMD ["--host", "0.0.0.0", "--port", "8080"]
