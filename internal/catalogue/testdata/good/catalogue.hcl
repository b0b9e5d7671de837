host "mesh-1" {
  snapshot = "mesh-1.json"
}

host "mesh-2" {
  docker = "ssh://deploy@mesh-2.example.org"
}

registry "registry.example.org" {
  mirror = "layout"
}

registry "docker.io" {
  mirror      = "mirror.example.org:5000"
  token_hosts = ["auth.mirror.example.org"]
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.22.6@sha256:0000000000000000000000000000000000000000000000000000000000000001"
  runs_on "mesh-1" { container = "forgejo" }
  runs_on "mesh-2" {}
}

module "alpine" {
  image      = "alpine"
  policy     = "track-upstream"
  constraint = "~3.20"
  platforms  = ["linux/arm64/v8"]
}

module "db" {
  image           = "registry.example.org/db/postgres"
  policy          = "exact"
  pin             = "sha256:0000000000000000000000000000000000000000000000000000000000000002"
  one_way         = true
  allow_downgrade = "16.5 corrupts indexes on our workload"
  restore         = "backup db-2026-11-30"
  versioning      = "regex:^(?P<version>[0-9.]+)-bookworm$"
}
