package postroom

import "time"

// SignDKIM signs msg with signers as a Mailer does, covering the header
// fields named in keys (the h= list), with t= at date, and returns the
// DKIM-Signature fields followed by msg. The differential tests sign with
// it at go-msgauth's t=.
func SignDKIM(signers []DKIMSigner, keys []string, date time.Time, msg []byte) ([]byte, error) {
	var s dkimScratch
	return newDKIMCallKeys(signers, keys, date).sign(&s, nil, msg)
}
