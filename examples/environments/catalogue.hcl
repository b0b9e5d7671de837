# Two environments, reproduced offline: staging runs forge 1.27.3,
# production still runs 1.25.1, and the catalogue pins 1.22.6. Each
# environment has its own lock (pin.lock.staging.hcl and
# pin.lock.production.hcl beside --lock): production's is held against
# production's hosts and its own previous entries only, so it is never
# below what production runs, and staging running something newer does
# not move it. The registry is the incident's layout mirror; the hosts
# are snapshots made from the incident's (examples/incident).
#
#   pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl resolve
#   pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl status
#   pin --catalogue examples/environments --lock examples/environments/pin.lock.hcl promote staging production
#
# The snapshots record when each container started (started_at): staging-1
# has run 1.27.3 since 2026-11-27, longer than production's soak.

host "staging-1" {
  snapshot = "staging-1.json"
}

host "prod-1" {
  snapshot = "prod-1.json"
}

registry "registry.example.org" {
  mirror = "../incident/registry"
}

environment "staging" {
  hosts = ["staging-1"]
}

environment "production" {
  hosts = ["prod-1"]
  from  = "staging"
  soak  = "24h"
}

module "forge" {
  image   = "registry.example.org/forge/forgejo"
  policy  = "at-least-running"
  pin     = "1.22.6@sha256:e8cb3b3125e6749cf5699a687da1e55dfd6a6e90d2343da333ae789259110665"
  one_way = true
  runs_on "staging-1" { container = "forgejo" }
  runs_on "prod-1" { container = "forgejo" }
}
