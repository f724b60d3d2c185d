package accesstoken

import (
	"crypto/ed25519"
	"encoding/base64"
)

type ed25519PublicKeys = map[string]ed25519.PublicKey

func encodeSeed(k Key) string { return base64.StdEncoding.EncodeToString(k.Private.Seed()) }
