# Mistakes in hosts read from their published observations. Each "ERROR:"
# comment names the summary of the diagnostic expected on its line.
host "edge-1" {
  observations = "oci://registry.example.org/fleet/observations" # ERROR: Unverified observations
}

host "edge-2" {
  observations = "oci://registry.example.org/fleet/observations:edge-2" # ERROR: Invalid observations reference
  max_age      = "soon" # ERROR: Invalid max_age
  verify {
    keys = ["fleet.pub"]
  }
}

host "edge-3" {
  observations = "observations/"
  docker       = "tcp://edge-3:2376" # ERROR: Conflicting host sources
  verify { # ERROR: Keyless observations need an OCI reference
    issuer       = "https://token.actions.githubusercontent.com"
    subject      = "https://github.com/example/fleet/.github/workflows/observe.yml@refs/heads/main"
    trusted_root = "trusted_root.json"
  }
}

host "mesh-1" {
  docker  = "unix:///var/run/docker.sock"
  max_age = "1h" # ERROR: max_age without observations
  verify { # ERROR: verify without observations
    keys = ["fleet.pub"]
  }
}

host "edge-4" {
  observations = "oci://registry.example.org/fleet/observations"
  max_age      = "-5m" # ERROR: Invalid max_age
  verify {
    keys = ["fleet.pub"]
  }
  verify { # ERROR: Duplicate verify block
    keys = ["other.pub"]
  }
}

module "app" {
  image  = "registry.example.org/app"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "edge-1" { container = "app" }
}

host ".edge-5" { # ERROR: Host name is not a tag
  observations = "oci://registry.example.org/fleet/observations"
  verify {
    keys = ["fleet.pub"]
  }
}
