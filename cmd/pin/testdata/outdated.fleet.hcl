# The fleet of "pin outdated"'s tests: every status at least once. The
# registry is the incident's OCI layout; mesh-1 is the incident's host and
# mesh-2 a second one (outdated.mesh-2.json). The lock is
# outdated.fleet.lock.hcl.

host "mesh-1" {
  snapshot = "examples/incident/mesh-1.json"
}

host "mesh-2" {
  snapshot = "mesh-2.json"
}

registry "registry.example.org" {
  mirror = "examples/incident/registry"
}

# current: the lock names what runs, and what "latest" names upstream.
module "analytics" {
  image  = "registry.example.org/analytics/web"
  policy = "at-least-running"
  pin    = "sha256:29742d2d37ae3b82053032635079e5c0479eb258f7b6d747c399eb816617d3d9"
  runs_on "mesh-1" { container = "analytics" }
}

# unknown-order: mesh-2 runs a canary build with no version and an epoch
# build date.
module "analytics-canary" {
  image  = "registry.example.org/analytics/web"
  policy = "at-least-running"
  pin    = "sha256:29742d2d37ae3b82053032635079e5c0479eb258f7b6d747c399eb816617d3d9"
  runs_on "mesh-2" { container = "analytics-canary" }
}

# behind-running and behind-upstream: the lock still names the pin, 1.22.6;
# mesh-1 runs 1.27.3, the newest upstream.
module "forge" {
  image   = "registry.example.org/forge/forgejo"
  policy  = "at-least-running"
  pin     = "1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
  one_way = true
  runs_on "mesh-1" { container = "forgejo" }
}

# behind-upstream, with a hint: 1.24.2 is the newest below 1.25; 1.27.3 is
# outside the constraint.
module "forge-lts" {
  image      = "registry.example.org/forge/forgejo"
  policy     = "track-upstream"
  pin        = "1.23.5"
  constraint = "< 1.25"
  runs_on "mesh-2" { container = "forgejo-lts" }
}

# error: the floating tag it follows is gone from the registry; its
# container is not found either.
module "forge-nightly" {
  image  = "registry.example.org/forge/forgejo"
  policy = "track-upstream"
  tag    = "nightly"
  runs_on "mesh-2" { container = "forgejo-nightly" }
}

# skew: mesh-1 runs 6.10.3, mesh-2 still 6.10.2.
module "packages" {
  image  = "registry.example.org/packages/registry"
  policy = "at-least-running"
  pin    = "6.10.1@sha256:e77b6b777a48c3b62411fea134fec39ba9b6518cd829d191a87a27a5a7fce053"
  runs_on "mesh-1" { container = "packages" }
  runs_on "mesh-2" { container = "packages" }
}

# unlocked: new in the catalogue, not in the lock yet.
module "packages-next" {
  image  = "registry.example.org/packages/registry"
  policy = "at-least-running"
  pin    = "6.10.1@sha256:e77b6b777a48c3b62411fea134fec39ba9b6518cd829d191a87a27a5a7fce053"
}
