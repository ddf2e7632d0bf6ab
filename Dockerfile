# Two images from one build (release, the flags of `make build`):
#
#   docker build .                     the employees service (employees-server); the default, the last stage
#   docker build --target sql-rest .   sql-rest, serving the folder mounted at /services
#
# docker-compose.yml uses both (the sql-rest one in its `sql-rest` profile).

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
 && swift build -c release $RELEASE_FLAGS --product sql-rest \
 && bin="$(swift build -c release $RELEASE_FLAGS --show-bin-path)" \
 && cp "$bin/employees-server" "$bin/sql-rest" /usr/local/bin/

# What both servers need at run time: libpq, libmicrohttpd, OpenSSL; curl for the health checks.
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq5 libmicrohttpd12 libssl3 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 8080

# sql-rest serving a folder of annotated .sql files, mounted at /services:
#   docker run -v "$PWD/api:/services:ro" -e DATABASE_URL=postgresql://... -p 8080:8080 IMAGE
# `sql-rest init` writes such a folder from the database's catalog, as the
# folder's owner:
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD/api:/services" -e DATABASE_URL=... IMAGE init --out /services
# Every option has an environment variable (SQL_REST_PORT, SQL_REST_WATCH, ...: sql-rest --help).
FROM runtime AS sql-rest
COPY --from=build /usr/local/bin/sql-rest /usr/local/bin/sql-rest
USER nobody
ENTRYPOINT ["/usr/local/bin/sql-rest"]
CMD ["serve", "--services", "/services", "--host", "0.0.0.0", "--port", "8080"]

# The employees service. The database comes from the environment:
# DATABASE_URL (as docker-compose.yml sets it) or libpq's PG* variables; the
# other options have environment variables too (EMPLOYEES_PORT, LOG_LEVEL,
# ...: employees-server --help).
FROM runtime AS employees
COPY --from=build /usr/local/bin/employees-server /usr/local/bin/employees-server
USER nobody
ENTRYPOINT ["/usr/local/bin/employees-server"]
CMD ["--host", "0.0.0.0", "--port", "8080"]
