package movimiento

// MessageGroup is the message group a movement is sent in on a FIFO queue or topic: the
// account whose balance it debits or holds. That is Cuenta for every tipo: a
// transfer's debited account, a capture's or release's hold account, an abono's only
// account. SQS then hands one account's movements to one consumer at a time, in the
// order they were sent. Cuenta's characters and length fit what SQS allows in a group
// id (128 characters).
func (m Movimiento) MessageGroup() string { return m.Cuenta }

// DeduplicationID is a movement's FIFO deduplication id: the lowercase hex SHA-256 of
// cuenta and id joined by a line feed, 64 characters. It derives from the idempotency
// key, so the queue drops a producer's resend of one fact within its five-minute
// window however it is spelt; a resend after it reaches the ledger as a duplicate.
// (cuenta, id) itself may run to 193 characters, over SQS's 128: hence the hash.
func (m Movimiento) DeduplicationID() string { return hash(m.Cuenta, m.ID) }
