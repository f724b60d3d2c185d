package queue

import "strconv"

// JoinCommand returns the join script's source and the arguments of one
// EVAL for eventID, with the customer id left as customerPlaceholder, so a
// benchmark can run the very same script outside the service (for example
// with redis-benchmark) as a baseline.
func JoinCommand(eventID int64, customerPlaceholder string) (source string, keys, args []string) {
	k := keysFor(eventID)
	return joinSource,
		[]string{k.customers, k.queue, k.arrival, k.active, k.gen},
		[]string{customerPlaceholder, "0", "shuffle", "0", strconv.FormatInt(postOpenBase, 10), "1"}
}
