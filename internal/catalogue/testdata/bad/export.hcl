# Each "ERROR:" comment names the summary of the diagnostic expected on its
# line: mistakes in the export block, every one in one run.
export {
  compose {
    files        = ["compose.yaml", ""] # ERROR: Empty path
    project_name = ["stack"]            # ERROR: Invalid value
    profiles     = "build"              # ERROR: Invalid value
    in_place     = "yes"                # ERROR: Invalid value
  }
  compose { # ERROR: Missing Compose files
    file = "compose.yaml" # ERROR: Unsupported argument
  }
  compose { # ERROR: Duplicate compose project
    files = ["./compose.yaml", "compose.prod.yaml"]
  }
  compose {
    files = [] # ERROR: Missing Compose files
  }
  manifest  = ["deploy/"]                # ERROR: Unsupported argument
  kustomize = "overlays/prod"            # ERROR: Invalid value
  env       = ["deploy.env", "deploy.env"] # ERROR: Duplicate path
}

export { # ERROR: Duplicate export block
  env = ["other.env"]
}

module "app" {
  image  = "registry.example.org/app"
  policy = "exact"
  pin    = "1.0"
}
