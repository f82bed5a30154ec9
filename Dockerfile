# Multi-stage build: compile in the Rust image, ship the binary alone on a slim Debian with
# CA certificates (outgoing HTTPS: client key sets, metadata documents, logout deliveries).
#   docker build -t authrim .
#   docker run -p 8080:8080 -v authrim-data:/var/lib/authrim \
#     -e AUTHRIM_ISSUER=https://id.example.com -e AUTHRIM_ADMIN_TOKEN=... authrim
# The data volume holds the database and the key-encryption key: back it up, keep it private.
FROM rust:1.95-bookworm AS build
WORKDIR /src
# The SAML module (src/saml) links xmlsec1, libxml2 and OpenSSL, and needs libclang to build.
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libxmlsec1-dev libxml2-dev libssl-dev libclang-dev \
 && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cargo build --release --locked --bin authrim

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libxmlsec1 libxmlsec1-openssl libxml2 libssl3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/authrim --shell /usr/sbin/nologin authrim \
 && install -d -m 0700 -o authrim -g authrim /var/lib/authrim
COPY --from=build /src/target/release/authrim /usr/local/bin/authrim
USER authrim
WORKDIR /var/lib/authrim
ENV AUTHRIM_DATA_DIR=/var/lib/authrim \
    AUTHRIM_LISTEN=0.0.0.0:8080
VOLUME ["/var/lib/authrim"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/authrim"]
CMD ["serve"]
