package consumer

import "github.com/ledger-dev/ledger/internal/store"

// Groups splits deliveries into groups that can be applied concurrently: deliveries
// that touch a common account (cuenta, a transfer's destino, a reparto's parts) or came
// in one FIFO message group (Entrega.Grupo), transitively, share a group. Each lists
// delivery indices in arrival order, and groups are ordered by their first delivery, so
// applying each in order keeps every account's and every message group's arrival order.
func Groups(es []store.Entrega) [][]int {
	parent := map[string]string{} // union-find over account ids and ("\x00"-led) message groups
	var find func(string) string
	find = func(c string) string {
		if p, ok := parent[c]; ok && p != c {
			parent[c] = find(p)
			return parent[c]
		}
		parent[c] = c
		return c
	}
	for _, e := range es {
		if e.Mov.Destino != "" { // a transfer links its two accounts
			parent[find(e.Mov.Destino)] = find(e.Mov.Cuenta)
		}
		for _, p := range e.Mov.Partes { // a reparto links its payer and every part
			parent[find(p.Cuenta)] = find(e.Mov.Cuenta)
		}
		if e.Grupo != "" { // a message group links its accounts; "\x00" is in no account id
			parent[find("\x00"+e.Grupo)] = find(e.Mov.Cuenta)
		}
	}
	var groups [][]int
	at := map[string]int{} // root → position in groups
	for i, e := range es {
		root := find(e.Mov.Cuenta)
		g, ok := at[root]
		if !ok {
			g, at[root] = len(groups), len(groups)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}
