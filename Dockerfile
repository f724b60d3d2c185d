# syntax=docker/dockerfile:1
# One image, two static binaries: the operator (/manager, the entrypoint)
# and the services (/ticketfair queue|booking|relay|tickets|migrate|edge|
# check-install), so the operator can run the sale's Deployments from its
# own image. The tools of development (ticketfair-dev: demo, loadtest,
# audit, bench, with the embedded Kafka broker) are never in it.

FROM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
ENV CGO_ENABLED=0 GOTOOLCHAIN=auto
# Dependencies first, so source edits reuse the module cache layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w" -o /out/manager . && \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags="-s -w" -o /out/ticketfair ./workloads/cmd/ticketfair

# scratch: no shell, no package manager; only the binaries, CA certificates
# and time zones, run as a non-root user.
FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /usr/share/zoneinfo /usr/share/zoneinfo
LABEL org.opencontainers.image.title="ticketfair" \
      org.opencontainers.image.description="ticketfair operator and workloads" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/manager /manager
COPY --from=build /out/ticketfair /ticketfair
USER 65532:65532
ENTRYPOINT ["/manager"]
