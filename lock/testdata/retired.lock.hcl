# This file is maintained by pin. It records, for every module of the
# catalogue, the image to run and why. Edit the catalogue, not this file,
# and run "pin resolve" to update it.

hosts = ["mesh-1", "mesh-2"]

module "db" {
  policy          = "exact"
  image           = "registry.example.org/db/postgres"
  digest          = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
  source          = "pin"
  rule            = "version"
  reason          = "the exact pin"
  allow_downgrade = "16.5 corrupts indexes"
  restore         = "backup 2026-11-30"
}

module "web" {
  policy  = "track-upstream"
  image   = "index.docker.io/library/nginx"
  tag     = "v1.2"
  digest  = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
  version = "1.2"
  platforms = {
    "linux/amd64"    = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    "linux/arm64/v8" = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
  }
  source = "upstream"
  rule   = "version"
  reason = "newest upstream tag within ~1.2"
}

retired "cache" {
  policy  = "exact"
  image   = "registry.example.org/cache/redis"
  tag     = "7.4.1"
  digest  = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
  version = "7.4.1"
  created = "2026-10-01T00:00:00Z"
  source  = "pin"
  reason  = "the exact pin"
}

retired "forge" {
  policy  = "at-least-running"
  image   = "registry.example.org/forge/forgejo"
  tag     = "1.27.3"
  tags    = ["1.27", "1.27.3"]
  digest  = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
  config  = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
  version = "1.27.3"
  created = "2026-09-01T12:00:00Z"
  source  = "running"
  rule    = "version"
  reason  = "host mesh-1 runs 1.27.3, newer than the pin 1.22.6"
  hosts   = ["mesh-1", "mesh-2"]

  observed "mesh-1" {
    container = "forgejo"
    tag       = "1.27.3"
    digest    = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    image_id  = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
    version   = "1.27.3"
    created   = "2026-09-01T12:00:00Z"
  }

  observed "mesh-2" {
    container = "forgejo"
    tag       = "1.27.3"
    digest    = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    image_id  = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
    version   = "1.27.3"
  }
}
