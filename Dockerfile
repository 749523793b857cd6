# riskapi's container image (docs/deploying.md, Containers): one static binary,
# the dashboard embedded (web/dist is committed), run as a non-root user.
#
#   docker build -t riskapi .
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e SECRET_KEY=… riskapi
#
# Without DATABASE_URL it keeps SQLite in /data (mount a volume there).

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first: they are cached while only the sources change.
COPY go.mod go.sum ./
# The root module replaces the Go SDK's module with ./sdk (its own go.mod), so
# the module graph needs that go.mod, though the binary does not import it.
COPY sdk/go.mod sdk/go.sum ./sdk/
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY web ./web
ARG VERSION=""
# CGO_ENABLED=0: pure Go (the SQLite driver too), so the binary needs no libc.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" -o /out/api ./cmd/api \
    && mkdir -p /out/data/uploads

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/api /usr/local/bin/api
# The data directory, owned by the image's non-root user (65532): SQLite's file,
# secret.key and uploads when DATABASE_URL is left at its default.
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
USER 65532:65532
ENV ADDR=:8080 \
    DATABASE_URL=sqlite:///data/riskapi.db \
    UPLOAD_DIR=/data/uploads
EXPOSE 8080
VOLUME ["/data"]
# The binary checks itself: the image has no shell or curl.
HEALTHCHECK --interval=10s --timeout=4s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/api", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/api"]
CMD ["serve"]
