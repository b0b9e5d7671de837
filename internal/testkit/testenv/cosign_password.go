package testenv

// Password is the password of the key pair's private key (cosign.key),
// as COSIGN_PASSWORD gives it to cosign: for code under test that reads
// cosign's key format itself.
func (c *CosignCLI) Password() string { return c.password }
