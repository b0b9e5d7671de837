# Where the deploy reads the lock: pin export and pin propose write these.
export {
  compose {
    files        = ["compose.yaml", "compose.prod.yaml"]
    project_name = "stack"
    profiles     = []
  }
  compose {
    files    = ["/srv/other/compose.yaml"]
    in_place = true
  }
  manifests = ["deploy/"]
  kustomize = ["overlays/prod"]
  env       = ["deploy.env"]
}

module "web" {
  image  = "registry.example.org/web"
  policy = "exact"
  pin    = "1.0"
}
