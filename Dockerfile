# syntax=docker/dockerfile:1
# The karta image: a static binary on distroless, running as a non-root user.
#   make image                      # karta:<git describe>
#   make image IMAGE=registry.example.com/karta:v1.2.3 VERSION=v1.2.3
# test/helm/dockerfile_test.go checks this recipe's invariants.

# The Go toolchain of go.mod's go directive, or newer.
ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS
ARG TARGETARCH
# What `karta version` prints (make image passes git's).
ARG VERSION=devel
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/karta ./cmd/karta

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/karta /karta
USER 65532:65532
ENTRYPOINT ["/karta"]
