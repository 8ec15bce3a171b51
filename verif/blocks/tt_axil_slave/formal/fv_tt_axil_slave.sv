`default_nettype none
// fv_tt_axil_slave: the properties of rtl/tt_axil_slave.v, a wrapper that instantiates it (top of
// tt_axil_slave.sby).
//
// The master and the register bus are free inputs. Assumed of the master (its side of AXI4-Lite, spec A3.2.1):
// a VALID, once raised, stays with its payload unchanged until its READY. Nothing else: the master may hold
// BREADY / RREADY low for ever, raise AW before W or after, and the bus may take any number of cycles to ack
// (or never). Asserted of the slave:
//   - B and R: VALID stays with its payload until READY (spec A3.2.1, the slave's side);
//   - no response without a request and one per request: the B count equals the bus writes done, each bus
//     write follows an accepted AW and W; the same for R, bus reads and AR (spec A3.3.1: BVALID only after
//     both the AW and W handshakes, RVALID only after the AR handshake);
//   - order and payload: a write (and a read) of the solver's choosing is followed from its handshakes to the
//     bus and to its response: the bus carries its own address, data and strobes, and its response carries
//     that transaction's bus result, at its own place in the response stream;
//   - SLVERR exactly when the bus reported an error in the transaction's ack cycle, OKAY otherwise (the slave
//     decodes no addresses itself: tt_accel's register file refuses the addresses outside its map through
//     bus_err, so "the addresses the map refuses" are those acked with bus_err; EXOKAY and DECERR never);
//   - the handshake dependencies: AWREADY, WREADY and ARREADY wait for nothing the master drives. Each is high
//     exactly while its holding register is empty (every accepted AW has been executed on the bus, and so on),
//     so they never wait for WVALID, BREADY or RREADY; a full register empties when its transaction is
//     executed, which waits only for the previous response's handshake (one transaction outstanding);
//   - the register bus: req holds with its fields until ack, drops after it, and reads carry zero data/strobes.
// With FAIR defined (task live) the master and the bus are also bounded in their waits, and every request is
// asserted to be taken and answered within a bound: no deadlock.
module fv_tt_axil_slave #(
  parameter integer ADDR_W = 6,  // 16 words: small state; the logic does not depend on the width
  parameter integer WAIT_MAX = 14,   // with FAIR: the longest a request VALID waits for its READY
  parameter integer ANSWER_MAX = 13  // with FAIR: the longest an accepted request waits for its response
) (
  input wire              clk,
  input wire              rst,
  input wire [ADDR_W-1:0] awaddr,
  input wire [2:0]        awprot,
  input wire              awvalid,
  input wire [31:0]       wdata,
  input wire [3:0]        wstrb,
  input wire              wvalid,
  input wire              bready,
  input wire [ADDR_W-1:0] araddr,
  input wire [2:0]        arprot,
  input wire              arvalid,
  input wire              rready,
  input wire              bus_ack,
  input wire [31:0]       bus_rdata,
  input wire              bus_err,
  input wire              tag_w_now,  // free: the solver picks which write is followed
  input wire              tag_r_now   // and which read
);

  localparam [1:0] OKAY = 2'b00;
  localparam [1:0] SLVERR = 2'b10;

  wire              awready, wready, arready, bvalid, rvalid;
  wire [1:0]        bresp, rresp;
  wire [31:0]       rdata;
  wire              bus_req, bus_we;
  wire [ADDR_W-3:0] bus_addr;
  wire [31:0]       bus_wdata;
  wire [3:0]        bus_wstrb;

  tt_axil_slave #(.ADDR_W(ADDR_W), .DATA_W(32)) dut (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(awaddr), .s_axil_awprot(awprot), .s_axil_awvalid(awvalid), .s_axil_awready(awready),
    .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(wready),
    .s_axil_bresp(bresp), .s_axil_bvalid(bvalid), .s_axil_bready(bready),
    .s_axil_araddr(araddr), .s_axil_arprot(arprot), .s_axil_arvalid(arvalid), .s_axil_arready(arready),
    .s_axil_rdata(rdata), .s_axil_rresp(rresp), .s_axil_rvalid(rvalid), .s_axil_rready(rready),
    .bus_req(bus_req), .bus_we(bus_we), .bus_addr(bus_addr), .bus_wdata(bus_wdata), .bus_wstrb(bus_wstrb),
    .bus_ack(bus_ack), .bus_rdata(bus_rdata), .bus_err(bus_err)
  );

  // The holding registers, connected by tt_axil_slave.sby's script (`connect -set`: open yosys has no
  // hierarchical references). k-induction needs them: a held address or word is invisible at the ports while
  // the bus serves the other kind or the master stalls the previous response, for any number of cycles.
  (* keep *) wire [ADDR_W-3:0] dut_aw_addr_q;
  (* keep *) wire [31:0]       dut_w_data_q;
  (* keep *) wire [3:0]        dut_w_strb_q;
  (* keep *) wire [ADDR_W-3:0] dut_ar_addr_q;
  (* keep *) wire              dut_last_wr_q;  // the tie-break: the bounded-wait proof needs it to match bus_we

  reg init = 1'b1;
  always @(posedge clk) init <= 1'b0;
  always @(*) if (init) assume (rst);
  // Checks that look one cycle back skip the cycle after a reset, whose previous state the reset dropped.
  reg past_rst = 1'b1;
  always @(posedge clk) past_rst <= rst;
  wire settled = !init && !past_rst;

  // ---- the master's side of the rules (assumed) ----
  always @(posedge clk) begin
    if (settled) begin
      if ($past(awvalid && !awready)) assume (awvalid && awaddr == $past(awaddr));
      if ($past(wvalid && !wready)) assume (wvalid && wdata == $past(wdata) && wstrb == $past(wstrb));
      if ($past(arvalid && !arready)) assume (arvalid && araddr == $past(araddr));
    end
  end

  wire aw_fire = awvalid && awready;
  wire w_fire  = wvalid && wready;
  wire ar_fire = arvalid && arready;
  wire b_fire  = bvalid && bready;
  wire r_fire  = rvalid && rready;
  wire wr_done = bus_req && bus_ack && bus_we;
  wire rd_done = bus_req && bus_ack && !bus_we;

  // Handshakes and bus transactions since reset, modulo 16.
  reg [3:0] aw_cnt, w_cnt, ar_cnt, b_cnt, r_cnt, wr_cnt, rd_cnt;
  always @(posedge clk) begin
    if (rst) begin
      {aw_cnt, w_cnt, ar_cnt, b_cnt, r_cnt, wr_cnt, rd_cnt} <= 28'd0;
    end else begin
      aw_cnt <= aw_cnt + {3'd0, aw_fire};
      w_cnt  <= w_cnt + {3'd0, w_fire};
      ar_cnt <= ar_cnt + {3'd0, ar_fire};
      b_cnt  <= b_cnt + {3'd0, b_fire};
      r_cnt  <= r_cnt + {3'd0, r_fire};
      wr_cnt <= wr_cnt + {3'd0, wr_done};
      rd_cnt <= rd_cnt + {3'd0, rd_done};
    end
  end

  // ---- the followed write: armed while nothing of the next write is held, so it sees its AW and W ----
  reg              tw;            // a write is followed
  reg              tw_aw, tw_w;   // its AW / W has been accepted
  reg              tw_acked;      // its bus transaction has been acked
  reg              tw_answered;   // its B has been taken
  reg [3:0]        tw_idx;        // its place among the writes
  reg [ADDR_W-3:0] tw_addr;
  reg [31:0]       tw_data;
  reg [3:0]        tw_strb;
  reg              tw_err;
  wire tw_arm   = !tw && tag_w_now && awready && wready;
  wire tw_live  = tw || tw_arm;
  wire tw_onbus = tw && !tw_acked && bus_req && bus_we && wr_cnt == tw_idx;
  always @(posedge clk) begin
    if (rst) begin
      {tw, tw_aw, tw_w, tw_acked, tw_answered} <= 5'd0;
    end else begin
      if (tw_arm) begin
        tw     <= 1'b1;
        tw_idx <= wr_cnt;
      end
      if (tw_live && !tw_aw && aw_fire) begin
        tw_aw   <= 1'b1;
        tw_addr <= awaddr[ADDR_W-1:2];
      end
      if (tw_live && !tw_w && w_fire) begin
        tw_w    <= 1'b1;
        tw_data <= wdata;
        tw_strb <= wstrb;
      end
      if (tw_onbus && bus_ack) begin
        tw_acked <= 1'b1;
        tw_err   <= bus_err;
      end
      if (tw_acked && !tw_answered && b_fire && b_cnt == tw_idx) begin
        tw_answered <= 1'b1;
      end
    end
  end

  // ---- the followed read ----
  reg              tr, tr_ar, tr_acked, tr_answered;
  reg [3:0]        tr_idx;
  reg [ADDR_W-3:0] tr_addr;
  reg [31:0]       tr_data;
  reg              tr_err;
  wire tr_arm   = !tr && tag_r_now && arready;
  wire tr_onbus = tr && !tr_acked && bus_req && !bus_we && rd_cnt == tr_idx;
  always @(posedge clk) begin
    if (rst) begin
      {tr, tr_ar, tr_acked, tr_answered} <= 4'd0;
    end else begin
      if (tr_arm) begin
        tr     <= 1'b1;
        tr_idx <= rd_cnt;
      end
      if ((tr || tr_arm) && !tr_ar && ar_fire) begin
        tr_ar   <= 1'b1;
        tr_addr <= araddr[ADDR_W-1:2];
      end
      if (tr_onbus && bus_ack) begin
        tr_acked <= 1'b1;
        tr_data  <= bus_rdata;
        tr_err   <= bus_err;
      end
      if (tr_acked && !tr_answered && r_fire && r_cnt == tr_idx) begin
        tr_answered <= 1'b1;
      end
    end
  end

  // ---- the slave's side (asserted) ----
  always @(*) begin
    if (!init) begin
      // Ready exactly while the holding register is empty: all accepted requests of the kind executed.
      a_awready_iff_empty: assert (awready == (aw_cnt == wr_cnt));
      a_wready_iff_empty: assert (wready == (w_cnt == wr_cnt));
      a_arready_iff_empty: assert (arready == (ar_cnt == rd_cnt));
      // At most one request of each kind accepted and not executed: one holding register each.
      a_one_held_per_kind: assert (aw_cnt - wr_cnt <= 4'd1 && w_cnt - wr_cnt <= 4'd1 && ar_cnt - rd_cnt <= 4'd1);
      // A bus transaction only for an accepted, not yet executed request (a write: both AW and W).
      a_bus_write_requested: assert (!(bus_req && bus_we) || (aw_cnt != wr_cnt && w_cnt != wr_cnt));
      a_bus_read_requested: assert (!(bus_req && !bus_we) || ar_cnt != rd_cnt);
      // One response per executed transaction, none without one: taken + waiting = executed.
      a_one_b_per_write: assert (b_cnt + {3'd0, bvalid} == wr_cnt);
      a_one_r_per_read: assert (r_cnt + {3'd0, rvalid} == rd_cnt);
      // One transaction outstanding end to end (what makes the in-order claims hold across the channels).
      a_one_outstanding: assert ({1'b0, bus_req} + {1'b0, bvalid} + {1'b0, rvalid} <= 2'd1);
      // Only OKAY or SLVERR.
      a_bresp_legal: assert (!bvalid || bresp == OKAY || bresp == SLVERR);
      a_rresp_legal: assert (!rvalid || rresp == OKAY || rresp == SLVERR);
      // A read's bus cycle carries no write data.
      a_read_no_wdata: assert (!(bus_req && !bus_we) || (bus_wdata == 32'd0 && bus_wstrb == 4'd0));

      // The followed write: its own address, data and strobes on the bus, its own bus result in its B.
      a_write_payload: assert (!tw_onbus || (tw_aw && tw_w && bus_addr == tw_addr && bus_wdata == tw_data
                                            && bus_wstrb == tw_strb));
      a_bresp_is_bus_result: assert (!(tw_acked && !tw_answered && bvalid && b_cnt == tw_idx)
                                     || bresp == (tw_err ? SLVERR : OKAY));
      // The followed read: its own address on the bus, its bus data and result in its R.
      a_read_addr: assert (!tr_onbus || (tr_ar && bus_addr == tr_addr));
      a_rresp_is_bus_result: assert (!(tr_acked && !tr_answered && rvalid && r_cnt == tr_idx)
                                     || (rresp == (tr_err ? SLVERR : OKAY) && rdata == tr_data));

      // Induction strengthening: a followed request is at the head of its kind until it is answered, and its
      // held fields are still in the holding registers until its bus transaction.
      a_tw_head: assert (!tw || tw_answered || (wr_cnt == tw_idx && !tw_acked)
                         || (tw_acked && wr_cnt == tw_idx + 4'd1 && b_cnt == tw_idx && bvalid));
      a_tw_held: assert (!(tw && !tw_acked) || ((!tw_aw || (!awready && dut_aw_addr_q == tw_addr))
                                               && (!tw_w || (!wready && dut_w_data_q == tw_data
                                                             && dut_w_strb_q == tw_strb))));
      a_tw_counts: assert (!(tw && !tw_acked) || (aw_cnt == tw_idx + {3'd0, tw_aw} && w_cnt == tw_idx + {3'd0, tw_w}));
      a_tw_flags: assert ((tw || !(tw_aw || tw_w || tw_acked || tw_answered)) && (!tw_acked || (tw_aw && tw_w))
                          && (!tw_answered || tw_acked));
      a_tr_head: assert (!tr || tr_answered || (rd_cnt == tr_idx && !tr_acked)
                         || (tr_acked && rd_cnt == tr_idx + 4'd1 && r_cnt == tr_idx && rvalid));
      a_tr_held: assert (!(tr && !tr_acked && tr_ar) || (!arready && dut_ar_addr_q == tr_addr));
      // The tie-break remembers the kind of the transaction on the bus or answered (which bus_we still shows).
      a_last_kind: assert (dut_last_wr_q == bus_we && (!bvalid || bus_we) && (!rvalid || !bus_we));
      a_tr_counts: assert (!(tr && !tr_acked) || ar_cnt == tr_idx + {3'd0, tr_ar});
      a_tr_flags: assert ((tr || !(tr_ar || tr_acked || tr_answered)) && (!tr_acked || tr_ar)
                          && (!tr_answered || tr_acked));
    end
  end

  always @(posedge clk) begin
    if (settled) begin
      // B and R hold with their payload until the master's READY.
      if ($past(bvalid && !bready)) a_b_held: assert (bvalid && bresp == $past(bresp));
      if ($past(rvalid && !rready)) a_r_held: assert (rvalid && rresp == $past(rresp) && rdata == $past(rdata));
      // The bus request holds with its fields until ack and drops the cycle after.
      if ($past(bus_req && !bus_ack)) begin
        a_req_held: assert (bus_req && bus_we == $past(bus_we) && bus_addr == $past(bus_addr)
                            && bus_wdata == $past(bus_wdata) && bus_wstrb == $past(bus_wstrb));
      end
      if ($past(bus_req && bus_ack)) a_req_drops: assert (!bus_req);
    end
  end

  // ---- reachability: the antecedents above happen ----
  always @(*) begin
    if (!init && !rst) begin
      c_write_answered_okay: cover (tw_answered && !tw_err);
      c_write_answered_slverr: cover (tw_acked && bvalid && bresp == SLVERR);
      c_read_answered: cover (tr_answered && tr_err == 1'b0);
      c_read_slverr: cover (tr_acked && rvalid && rresp == SLVERR);
      c_w_before_aw: cover (tw && tw_w && !tw_aw);  // W accepted first, AW later
      c_b_stalled: cover (bvalid && !bready && awready == 1'b0 && wready == 1'b0);  // next write held behind B
      c_read_while_write_held: cover (bus_req && !bus_we && !awready);
      c_two_writes: cover (b_cnt == 4'd2);
    end
  end
  always @(posedge clk) begin
    if (settled) begin
      c_ack_waited: cover ($past(bus_req && !bus_ack) && bus_req && bus_ack);
      c_b_held: cover ($past(bvalid && !bready) && bvalid);
    end
  end

`ifdef FAIR
  // ---- no deadlock: bounded waits in, bounded waits out ----
  // Assumed: the bus acks within ACK_MAX cycles of a request, the master takes a B or R within RDY_MAX cycles
  // of its VALID, and sends the W of an AW it has sent (and the AW of a W) within OWE_MAX cycles.
  localparam integer ACK_MAX = 2;
  localparam integer RDY_MAX = 2;
  localparam integer OWE_MAX = 2;
  // Asserted: a VALID waits at most WAIT_MAX cycles for its READY, and an accepted request at most
  // ANSWER_MAX cycles for its response (module parameters). The figures are the worst case of the slave's
  // schedule under those waits: the other kind may go first (it alternates on a tie), each transaction taking a
  // start cycle, the bus ack and the response. They are exact: the covers below reach them (task cover_live).

  reg [4:0] ack_wait, b_wait, r_wait, owe_w_wait, owe_aw_wait, aw_wait, w_wait, ar_wait, wr_age, rd_age;
  wire owe_w  = aw_cnt != w_cnt && aw_cnt - wr_cnt == 4'd1;  // an AW without its W
  wire owe_aw = aw_cnt != w_cnt && w_cnt - wr_cnt == 4'd1;   // a W without its AW
  wire wr_pending = (aw_cnt != wr_cnt && w_cnt != wr_cnt) || (bvalid);  // accepted, B not yet taken
  wire rd_pending = ar_cnt != rd_cnt || rvalid;
  always @(posedge clk) begin
    if (rst) begin
      {ack_wait, b_wait, r_wait, owe_w_wait, owe_aw_wait, aw_wait, w_wait, ar_wait, wr_age, rd_age} <= 50'd0;
    end else begin
      ack_wait    <= (bus_req && !bus_ack) ? ack_wait + 5'd1 : 5'd0;
      b_wait      <= (bvalid && !bready) ? b_wait + 5'd1 : 5'd0;
      r_wait      <= (rvalid && !rready) ? r_wait + 5'd1 : 5'd0;
      owe_w_wait  <= (owe_w && !wvalid) ? owe_w_wait + 5'd1 : 5'd0;
      owe_aw_wait <= (owe_aw && !awvalid) ? owe_aw_wait + 5'd1 : 5'd0;
      aw_wait     <= (awvalid && !awready) ? aw_wait + 5'd1 : 5'd0;
      w_wait      <= (wvalid && !wready) ? w_wait + 5'd1 : 5'd0;
      ar_wait     <= (arvalid && !arready) ? ar_wait + 5'd1 : 5'd0;
      wr_age      <= (wr_pending && !b_fire) ? wr_age + 5'd1 : 5'd0;
      rd_age      <= (rd_pending && !r_fire) ? rd_age + 5'd1 : 5'd0;
    end
  end
  always @(*) begin
    if (!init) begin
      assume (!(bus_req && !bus_ack && ack_wait >= ACK_MAX));
      assume (!(bvalid && !bready && b_wait >= RDY_MAX));
      assume (!(rvalid && !rready && r_wait >= RDY_MAX));
      assume (!(owe_w && !wvalid && owe_w_wait >= OWE_MAX));
      assume (!(owe_aw && !awvalid && owe_aw_wait >= OWE_MAX));
      a_aw_taken_in_time: assert (aw_wait <= WAIT_MAX);
      a_w_taken_in_time: assert (w_wait <= WAIT_MAX);
      a_ar_taken_in_time: assert (ar_wait <= WAIT_MAX);
      a_write_answered_in_time: assert (wr_age <= ANSWER_MAX);
      a_read_answered_in_time: assert (rd_age <= ANSWER_MAX);
      c_wait_bound_reached: cover (aw_wait == WAIT_MAX || w_wait == WAIT_MAX || ar_wait == WAIT_MAX);
      c_answer_bound_reached: cover (wr_age == ANSWER_MAX || rd_age == ANSWER_MAX);
    end
  end
`endif

  wire unused = ^{awprot, arprot};

endmodule
`default_nettype wire
