# Mistakes in Kubernetes hosts and in runs_on workloads and selectors. Each
# "ERROR:" comment names the summary of the diagnostic expected on its line.
host "prod" {
  kubernetes = { context = "prod", namespace = "Apps_1" } # ERROR: Invalid namespace
}

host "staging" {
  kubernetes = {
    context = "staging"
    cluster = "staging" # ERROR: Unsupported kubernetes setting
    selector = "tier in (web" # ERROR: Invalid label selector
  }
  docker = "unix:///var/run/docker.sock" # ERROR: Conflicting host sources
}

host "edge" {
  kubernetes = "edge" # ERROR: Invalid kubernetes setting
  snapshot   = "edge.json" # ERROR: Conflicting host sources
}

host "mesh-1" {
  docker = "unix:///var/run/docker.sock"
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.27.3"
  runs_on "prod" {
    workload  = "Deployment/forgejo" # ERROR: Invalid workload
    container = "forgejo"
  }
  runs_on "staging" {
    workload = "deployment/forgejo"
    selector = "app=forgejo" # ERROR: Conflicting runs_on targets
  }
  runs_on "edge" {
    workload = "replicaset/forgejo-7d9f" # ERROR: Invalid workload
  }
  runs_on "mesh-1" { # ERROR: Workload on a Docker host
    workload = "statefulset/forgejo"
  }
}

module "packages" {
  image  = "registry.example.org/packages/registry"
  policy = "at-least-running"
  pin    = "6.10.3"
  runs_on "prod" {
    selector = "app=" # (valid: the label app with an empty value)
  }
  runs_on "staging" {
    selector = "app==packages==x" # ERROR: Invalid label selector
  }
  runs_on "edge" {
    selector = "  " # ERROR: Invalid label selector
  }
  runs_on "edge" {
    workload = "pod/Packages_0" # ERROR: Invalid workload
  }
}
