# pin's default catalogue: the incident, reproduced offline.
#
# The modules were pinned when they were written. Host mesh-1 kept following
# floating tags and now runs newer builds than every pin. Taking a service
# over with its pin would be a downgrade; "pin resolve" catches all three.
# The registry is an OCI layout mirror and the host a snapshot, both under
# examples/incident/ (regenerate them with "go generate ./examples/incident").

host "mesh-1" {
  snapshot = "examples/incident/mesh-1.json"
}

registry "registry.example.org" {
  mirror = "examples/incident/registry"
}

# Pinned at 1.22.6; mesh-1 runs 1.27.3, which migrated forge's database.
module "forge" {
  image   = "registry.example.org/forge/forgejo"
  policy  = "at-least-running"
  pin     = "1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
  one_way = true
  runs_on "mesh-1" { container = "forgejo" }
}

# Pinned at 6.10.1; mesh-1 runs 6.10.3.
module "packages" {
  image  = "registry.example.org/packages/registry"
  policy = "at-least-running"
  pin    = "6.10.1@sha256:e77b6b777a48c3b62411fea134fec39ba9b6518cd829d191a87a27a5a7fce053"
  runs_on "mesh-1" { container = "packages" }
}

# No version at all: pinned at the build of 2026-08-20; mesh-1 runs the
# build of 2026-09-17, which "latest" now names. Build dates decide.
module "analytics" {
  image  = "registry.example.org/analytics/web"
  policy = "at-least-running"
  pin    = "sha256:29742d2d37ae3b82053032635079e5c0479eb258f7b6d747c399eb816617d3d9"
  runs_on "mesh-1" { container = "analytics" }
}
