host "prod" {
  kubernetes = { context = "prod", namespace = "apps", kubeconfig = "kube/config" }
}

host "staging" {
  kubernetes = {
    kubeconfig = "~/.kube/staging"
    selector   = "team=forge"
  }
}

# kubectl's current context and its namespace, or the pod's own cluster.
host "here" {
  kubernetes = {}
}

# A snapshot taken of a cluster with pin lock --from-host --snapshot.
host "prod-copy" {
  snapshot = "prod.json"
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.27.3"
  runs_on "prod" {
    workload  = "deployment/forgejo"
    container = "forgejo"
  }
  runs_on "staging" {
    selector = "app in (forgejo), track!=canary"
  }
  runs_on "prod-copy" { workload = "deployment/forgejo" }
  runs_on "here" { workload = "pod/forgejo-0" }
}
