# Each "ERROR:" comment names the summary of the diagnostic expected on its
# line. The test checks both ways: every comment is matched and nothing else
# is reported.
registry "nvcr.io" {
  token_hosts = ["https://authn.nvidia.com/token"] # ERROR: Invalid token host
}

registry "ghcr.io" {
  token_hosts = "auth.example.com" # ERROR: Invalid value
}

registry "quay.io" {
  token_hosts = ["auth.example.com", "auth.example.com:8443"]
}

module "app" {
  image  = "nvcr.io/nvidia/app"
  policy = "exact"
  pin    = "1.0"
}
