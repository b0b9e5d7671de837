# Each "ERROR:" comment names the summary of the diagnostic expected on its
# line. The test checks both ways: every comment is matched and nothing else
# is reported.
host "mesh-1" {
  snapshot = "mesh-1.json"
}

host "mesh-1" { # ERROR: Duplicate host
  docker = "unix:///var/run/docker.sock"
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-runing" # ERROR: Unknown policy
  pin    = "1.22.6@sha256:abc" # ERROR: Invalid pin
  runs_on "mesh-2" { # ERROR: Undefined host
    container = "forgejo"
  }
}

module "packages" { # ERROR: Missing pin
  image   = "registry.example.org/packages/registry"
  policy  = "exact"
  contaner = "x" # ERROR: Unsupported argument
}

module "web" {
  image      = "Registry.Example.org/UPPER/web" # ERROR: Invalid image reference
  policy     = "track-upstream"
  constraint = ">= 1.x.y" # ERROR: Invalid semver constraint
  tags       = "^1\\.(" # ERROR: Invalid regular expression
}

module "db" {
  image           = "registry.example.org/db/postgres"
  policy          = "exact"
  pin             = "16.4"
  allow_downgrade = "  " # ERROR: Empty downgrade reason
}

module "db" { # ERROR: Duplicate module
  image  = "registry.example.org/db/postgres:16" # ERROR: Image names a tag or digest
  policy = "exact"
  pin    = "16.4"
}

module "queue" {
  image           = "registry.example.org/queue/rabbit"
  policy          = "exact"
  pin             = "3.13.1"
  one_way         = true
  allow_downgrade = "3.13.2 leaks memory" # ERROR: Downgrade of a one-way service without a restore
}

module "cache" {
  image  = "registry.example.org/cache/valkey"
  policy = "track-upstream"
  versioning = "regex:^v[0-9]+$" # ERROR: Invalid versioning
}
