/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package queue

import "strconv"

// JoinCommand returns the join script's source and the arguments of one
// EVAL for eventID, with the customer id left as customerPlaceholder, so a
// benchmark can run the very same script outside the service (for example
// with redis-benchmark) as a baseline.
func JoinCommand(eventID int64, customerPlaceholder string) (source string, keys, args []string) {
	return joinSource, keysFor(eventID).joinKeys(),
		[]string{customerPlaceholder, "0", "shuffle", "0", strconv.FormatInt(postOpenBase, 10), "1"}
}

// JoinManyCommand is JoinCommand for the coalesced joins' script: one call
// carrying n joins after opening, each customer id customerPlaceholder, so
// that the script's own cost per join can be measured outside the service
// against JoinCommand's.
func JoinManyCommand(eventID int64, customerPlaceholder string, n int) (source string, keys, args []string) {
	args = []string{"0", "shuffle", strconv.FormatInt(postOpenBase, 10), "1", strconv.Itoa(n)}
	for range n {
		args = append(args, customerPlaceholder)
	}
	return joinManySource, keysFor(eventID).joinKeys(), args
}
