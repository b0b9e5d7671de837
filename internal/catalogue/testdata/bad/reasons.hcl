# A reason must say something: letters or digits. Blank ones, and ones made
# of characters nobody sees, accept nothing.
module "zwsp" {
  image           = "registry.example.org/team/zwsp"
  policy          = "exact"
  pin             = "1.22.6"
  allow_downgrade = "\u200b" # ERROR: Empty downgrade reason
}

module "joiner" {
  image           = "registry.example.org/team/joiner"
  policy          = "exact"
  pin             = "1.22.6"
  allow_downgrade = " \u2060\u00a0\t" # ERROR: Empty downgrade reason
}

module "oneway" {
  image           = "registry.example.org/team/oneway"
  policy          = "exact"
  pin             = "1.22.6"
  one_way         = true
  allow_downgrade = "the 1.27 migration broke search" # ERROR: Downgrade of a one-way service without a restore
  restore         = "\ufeff" # ERROR: Empty restore
}

module "words" {
  image           = "registry.example.org/team/words"
  policy          = "exact"
  pin             = "1.22.6"
  one_way         = true
  allow_downgrade = "Rückkehr zu 1.22: die Suche ist kaputt"
  restore         = "快照 2026-09-16"
}
