# Mistakes in runs_on compose. Each "ERROR:" comment names the summary of
# the diagnostic expected on its line.
host "mesh-1" {
  docker = "unix:///var/run/docker.sock"
}

host "prod" {
  kubernetes = { context = "prod" }
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  runs_on "mesh-1" {
    compose = "forgejo" # ERROR: Invalid compose service
  }
  runs_on "mesh-1" {
    compose = "Forge/forgejo" # ERROR: Invalid compose service
  }
  runs_on "mesh-1" {
    compose   = "forge/forgejo"
    container = "forgejo" # ERROR: Conflicting runs_on targets
  }
  runs_on "prod" { # ERROR: Compose service on a Kubernetes host
    compose = "forge/forgejo"
  }
}

module "web" {
  image  = "registry.example.org/web"
  policy = "at-least-running"
  runs_on "mesh-1" {
    compose = "forge/web-ui.v2"
  }
}
