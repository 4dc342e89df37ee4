//! What the responder's ACK/NAK frames and its flush must be, on top of
//! [`super::resp_reference`] (docs/responder.md, "ack_gen" and "Flush").
//!
//! `ack_gen` keeps one pending acknowledgement per QP and the newest
//! request replaces one not yet sent, whatever either is (ACK or NAK). So
//! the frames a QP sends are the required responses with some left out,
//! in order, and the last required one is always sent (nothing comes after
//! it to replace it). [`responses_cover`] checks exactly that;
//! [`super::resp_reference::acks_cover`] is the ACK-only form of it.

use super::resp_reference::{Effect, Responder, CQE_RECV};

/// Status of a flushed RECV (IBV_WC_WR_FLUSH_ERR).
pub const ST_WR_FLUSH_ERR: u8 = 5;

/// One response: (PSN, AETH syndrome, MSN). ACKs have syndrome
/// [`SYNDROME_ACK`](super::resp_reference::SYNDROME_ACK).
pub type Response = (u32, u8, u32);

/// The required responses of one QP's effects, in order.
pub fn required(effects: &[Effect]) -> Vec<Response> {
    effects
        .iter()
        .filter_map(|e| match *e {
            Effect::Ack { psn, msn } => Some((psn, super::resp_reference::SYNDROME_ACK, msn)),
            Effect::Nak { psn, nak, msn } => Some((psn, nak.syndrome(), msn)),
            _ => None,
        })
        .collect()
}

/// Whether `sent` is what `ack_gen` may make of `required`: a subsequence
/// of it (coalescing drops responses, never reorders or invents one) that
/// ends with the last required response. Returns the first problem.
pub fn responses_cover(required: &[Response], sent: &[Response]) -> Result<(), String> {
    match (sent.split_last(), required.split_last()) {
        (None, None) => Ok(()),
        (None, Some((r, _))) => Err(format!(
            "{} required response(s) never sent, the last being {r:?}",
            required.len()
        )),
        (Some((s, _)), None) => Err(format!("response {s:?} sent, none required")),
        // The last sent answers the last required; the others embed, in
        // order, in the ones before it (leftmost first, which finds an
        // embedding whenever there is one).
        (Some((s, srest)), Some((r, rrest))) if s == r => embed(rrest, srest).map(|_| ()),
        (Some((s, _)), Some((r, _))) => Err(format!(
            "the last response sent {s:?} is not the last required one {r:?} \
             (a required response never sent)"
        )),
    }
}

/// Embeds `sent` in order into `required`, leftmost; the index after the
/// last one used.
fn embed(required: &[Response], sent: &[Response]) -> Result<usize, String> {
    let mut k = 0;
    for (i, s) in sent.iter().enumerate() {
        let Some(j) = required[k..].iter().position(|r| r == s) else {
            return Err(format!(
                "response {i} (PSN {}, syndrome {:#04x}, MSN {}) is no required response \
                 still unanswered (next required: {:?})",
                s.0,
                s.1,
                s.2,
                required.get(k)
            ));
        };
        k += j + 1;
    }
    Ok(k)
}

/// A QP in ERROR completes every RECV it still holds with status 5,
/// opcode RECV, byte_len 0, in RQ order (docs/responder.md, "Flush").
pub fn flush(r: &mut Responder) -> Vec<Effect> {
    let src_qp = r.ctx.remote_qpn;
    r.rq.drain(..)
        .map(|q| Effect::Cqe {
            wr_id: q.wr_id,
            status: ST_WR_FLUSH_ERR,
            opcode: CQE_RECV,
            byte_len: 0,
            imm: None,
            src_qp,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACK5: Response = (5, 0, 1);
    const ACK6: Response = (6, 0, 2);
    const RNR7: Response = (7, 0x2C, 2);
    const SEQ7: Response = (7, 0x60, 2);

    #[test]
    fn every_response_sent_covers() {
        let req = [ACK5, ACK6, RNR7];
        assert_eq!(responses_cover(&req, &req), Ok(()));
    }

    #[test]
    fn coalesced_responses_cover_when_the_last_is_sent() {
        // ACK 5 replaced by ACK 6, ACK 6 by the RNR NAK: only the NAK left.
        assert_eq!(responses_cover(&[ACK5, ACK6, RNR7], &[RNR7]), Ok(()));
        assert_eq!(responses_cover(&[ACK5, ACK6, RNR7], &[ACK5, RNR7]), Ok(()));
        // A NAK overtaken by a later ACK is stale: dropping it is allowed.
        assert_eq!(responses_cover(&[SEQ7, ACK6], &[ACK6]), Ok(()));
        // Two equal responses, the second replacing the first.
        assert_eq!(responses_cover(&[ACK5, ACK5], &[ACK5]), Ok(()));
        assert_eq!(responses_cover(&[ACK5, ACK5], &[ACK5, ACK5]), Ok(()));
    }

    #[test]
    fn the_last_required_response_must_be_sent() {
        let e = responses_cover(&[ACK5, ACK6, RNR7], &[ACK5, ACK6]).unwrap_err();
        assert!(e.contains("not the last required"), "{e}");
        let e = responses_cover(&[ACK5], &[]).unwrap_err();
        assert!(e.contains("never sent"), "{e}");
    }

    #[test]
    fn reordered_invented_or_repeated_responses_fail() {
        // Out of order.
        assert!(responses_cover(&[ACK5, ACK6], &[ACK6, ACK5]).is_err());
        // A wrong MSN, a wrong syndrome.
        assert!(responses_cover(&[ACK5], &[(5, 0, 2)]).is_err());
        assert!(responses_cover(&[SEQ7], &[RNR7]).is_err());
        // Sent twice, required once.
        assert!(responses_cover(&[ACK5], &[ACK5, ACK5]).is_err());
        // Nothing required, something sent.
        assert!(responses_cover(&[], &[ACK5]).is_err());
        assert_eq!(responses_cover(&[], &[]), Ok(()));
    }

    #[test]
    fn flush_completes_what_the_rq_holds_in_order() {
        use super::super::resp_reference::QpCtx;
        use crate::wire::rqe;
        let ctx = QpCtx {
            qp: 2,
            remote_qpn: 0x33,
            uc: false,
            ready: true,
            pd: 1,
            mtu: 1024,
            epsn: 0,
            access: 0,
            min_rnr_timer: 0,
            mrs: 16,
        };
        let mut r = Responder::new(ctx, Vec::new());
        for id in [7, 9] {
            r.post_recv(rqe::Repr {
                wr_id: id,
                num_sge: 1,
                ..Default::default()
            });
        }
        let f = flush(&mut r);
        let ids: Vec<(u64, u8, u32)> = f
            .iter()
            .map(|e| match e {
                Effect::Cqe {
                    wr_id,
                    status,
                    src_qp,
                    opcode,
                    byte_len: 0,
                    imm: None,
                } if *opcode == 128 => (*wr_id, *status, *src_qp),
                other => panic!("not a flush completion: {other:?}"),
            })
            .collect();
        assert_eq!(ids, vec![(7, 5, 0x33), (9, 5, 0x33)]);
        assert!(r.rq.is_empty());
        assert!(flush(&mut r).is_empty());
    }
}
