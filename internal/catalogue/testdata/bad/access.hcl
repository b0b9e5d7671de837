# Each "ERROR:" comment names the summary of the diagnostic expected on its
# line: TLS, ssh and Docker context settings that contradict each other.
host "prod" {
  context    = "prod"
  docker     = "tcp://prod.example.org:2376" # ERROR: Conflicting host sources
  tls_verify = true                          # ERROR: Conflicting host sources
}

host "cluster" {
  kubernetes = {}
  context    = "prod" # ERROR: Conflicting host sources
}

registry "registry.example.org" {
  ca_file     = "certs/ca.crt"
  client_cert = "certs/client.cert" # ERROR: Incomplete client certificate
}

registry "ghcr.io" {
  mirror  = "./layout"
  ca_file = "certs/ca.crt" # ERROR: TLS setting on a folder mirror
}

module "app" {
  image  = "registry.example.org/app"
  policy = "exact"
  pin    = "1.0"
}
