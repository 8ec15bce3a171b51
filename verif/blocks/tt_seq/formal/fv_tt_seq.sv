`default_nettype none
// fv_tt_seq: the error state machine of rtl/tt_seq.v, a wrapper that instantiates it (top of tt_seq.sby).
//
// Everything the sequencer reads is free: the host's start / clear_error, the program memory's words (any
// program, legal or not), the units' done / error flags and the banks' error flags. A small program memory
// (16-word addresses, 12 words: a start address past the end exists) keeps the state small; the checks do not
// depend on the sizes. Asserted:
//   - the error flag and the error code agree: error exactly when the code is nonzero, and the code is one of
//     the six documented ones; busy and error are never high together;
//   - an error holds, with its code and pc, until clear_error, and clear_error leaves the error state idle;
//   - a start outside the program memory stops in error 2 (overrun) at once;
//   - a unit's error at its done stops in error 5 with the unit's own code; a bank's address or port error
//     during the op stops in error 3 or 4 (the unit's error first);
//   - a start while busy never lets the program end normally: the sequencer leaves busy only into the error
//     state (code 6, or an op's own error that came first), a start in the last busy cycle (the one in which
//     the back end takes the END record) included -- the cover c_start_at_end_refused reaches that case;
//   - done only while idle: never with busy or error.
module fv_tt_seq #(
  parameter integer PROG_AW    = 4,
  parameter integer PROG_DEPTH = 12
) (
  input wire               clk,
  input wire               rst,
  input wire               start,
  input wire [PROG_AW-1:0] start_pc,
  input wire               clear_error,
  input wire [31:0]        prog_rd_data,
  input wire [3:0]         unit_done,
  input wire [3:0]         unit_error,
  input wire [15:0]        unit_error_code,
  input wire               mem_addr_err,
  input wire               mem_port_err
);

  localparam integer MAX_W = 4;

  wire               busy, done, error;
  wire [3:0]         error_code, error_unit_code;
  wire [PROG_AW-1:0] error_pc, pc;
  wire [1:0]         unit;
  wire [3:0]         unit_start;

  tt_seq #(.PROG_AW(PROG_AW), .PROG_DEPTH(PROG_DEPTH), .MAX_W(MAX_W), .RANK(0)) dut (
    .clk(clk), .rst(rst),
    .start(start), .start_pc(start_pc), .clear_error(clear_error), .clear_counters(1'b0),
    .seed_load(1'b0), .seed(32'd0), .lfsr_state(),
    .busy(busy), .done(done), .error(error), .error_code(error_code), .error_unit_code(error_unit_code),
    .error_pc(error_pc), .pc(pc),
    .prog_rd_en(), .prog_rd_addr(), .prog_rd_data(prog_rd_data),
    .desc(), .unit(unit), .unit_start(unit_start), .unit_seed_load(), .unit_seed(),
    .unit_done(unit_done), .unit_error(unit_error), .unit_error_code(unit_error_code),
    .unit_sat(128'd0), .unit_maxabs({4 * MAX_W{1'b0}}), .unit_lfsr(64'd0),
    .mem_addr_err(mem_addr_err), .mem_port_err(mem_port_err),
    .stat_rd_en(1'b0), .stat_rd_addr(6'd0), .stat_rd_sat(), .stat_rd_max(),
    .stat_wr_sat_en(1'b0), .stat_wr_max_en(1'b0), .stat_wr_addr(6'd0), .stat_wr_data(32'd0),
    .cycles(), .unit_cycles(), .ops(), .sat_total()
  );

  // The two state machines and the front end's error, connected by tt_seq.sby's script (`connect -set`: open
  // yosys has no hierarchical references). k-induction needs them: the front end holds a bad record's code
  // while the op before it runs, invisible at the ports, for as long as the unit takes.
  (* keep *) wire [2:0] dut_state_q;
  (* keep *) wire [2:0] dut_f_state_q;
  (* keep *) wire [3:0] dut_f_err_q;
  (* keep *) wire       dut_abort_q;
  (* keep *) wire       dut_mem_addr_err_q;
  (* keep *) wire       dut_mem_port_err_q;
  localparam [2:0] S_IDLE = 3'd0, S_NEXT = 3'd1, S_STAT = 3'd5, S_WAIT = 3'd4, S_ERR = 3'd6;
  localparam [2:0] F_END = 3'd5, F_BAD = 3'd6;

  reg init = 1'b1;
  always @(posedge clk) init <= 1'b0;
  always @(*) if (init) assume (rst);
  reg past_rst = 1'b1;
  always @(posedge clk) past_rst <= rst;
  wire settled = !init && !past_rst;

  // The op in its unit: from its unit_start until the unit's done.
  reg in_op;
  reg [1:0] op_unit;
  always @(posedge clk) begin
    if (rst) begin
      in_op <= 1'b0;
    end else if (unit_start != 4'd0) begin
      in_op   <= 1'b1;
      op_unit <= unit;
    end else if (in_op && unit_done[op_unit]) begin
      in_op <= 1'b0;
    end
  end
  // A bank error seen during the op (the sequencer collects them until the unit's done).
  reg op_addr_err, op_port_err;
  always @(posedge clk) begin
    if (rst || unit_start != 4'd0) begin
      op_addr_err <= 1'b0;
      op_port_err <= 1'b0;
    end else if (in_op) begin
      op_addr_err <= op_addr_err || mem_addr_err;
      op_port_err <= op_port_err || mem_port_err;
    end
  end
  // A start arrived while busy (start_busy_q: in the previous cycle), and the sequencer was still busy the
  // cycle after it (aborted, until the sequencer stops).
  reg start_busy_q, aborted;
  // The back end took the END record in the previous cycle (it would end the program without an abort).
  reg end_taken_q;
  always @(posedge clk) end_taken_q <= !rst && (dut_state_q == S_NEXT || dut_state_q == S_STAT)
                                       && dut_f_state_q == F_END && !dut_abort_q;
  always @(posedge clk) begin
    if (rst) begin
      start_busy_q <= 1'b0;
      aborted      <= 1'b0;
    end else begin
      start_busy_q <= start && busy;
      aborted      <= busy && (aborted || start_busy_q);
    end
  end

  always @(*) begin
    if (!init) begin
      a_error_iff_code: assert (error == (error_code != 4'd0));
      a_code_documented: assert (error_code <= 4'd6);
      a_busy_or_error: assert (!(busy && error));
      a_done_only_when_idle: assert (!done || (!busy && !error));
      a_abort_ends_in_error: assert (!((aborted || start_busy_q) && !busy) || error);
      // Induction strengthening: legal states, a bad record carries an error code, the op tracker follows
      // the back end, an abort in flight is the sequencer's own.
      a_states_legal: assert (dut_state_q <= S_ERR && dut_f_state_q <= 3'd6);
      a_bad_record_has_code: assert (dut_f_state_q != F_BAD || dut_f_err_q == 4'd1 || dut_f_err_q == 4'd2);
      a_op_tracked: assert (in_op == (dut_state_q == S_WAIT) && (!in_op || op_unit == unit));
      a_bank_errors_tracked: assert (!in_op || (op_addr_err == dut_mem_addr_err_q
                                                && op_port_err == dut_mem_port_err_q));
      a_abort_tracked: assert (!busy || (aborted || start_busy_q) == dut_abort_q);
    end
  end

  always @(posedge clk) begin
    if (settled) begin
      if ($past(error && !clear_error)) begin
        a_error_holds: assert (error && error_code == $past(error_code) && error_pc == $past(error_pc)
                               && error_unit_code == $past(error_unit_code));
      end
      if ($past(error && clear_error)) begin
        a_clear_to_idle: assert (!error && !busy);
      end
      if ($past(start && !busy && !error && {1'b0, start_pc} >= PROG_DEPTH)) begin
        a_start_overrun: assert (error && error_code == 4'd2 && error_pc == $past(start_pc));
      end
      if ($past(in_op && unit_done[op_unit] && unit_error[op_unit])) begin
        a_unit_error: assert (error && error_code == 4'd5
                              && error_unit_code == $past(unit_error_code[4*op_unit +: 4]));
      end
      if ($past(in_op && unit_done[op_unit] && !unit_error[op_unit] && (op_addr_err || mem_addr_err))) begin
        a_addr_error: assert (error && error_code == 4'd3);
      end
      if ($past(in_op && unit_done[op_unit] && !unit_error[op_unit] && !(op_addr_err || mem_addr_err)
                && (op_port_err || mem_port_err))) begin
        a_port_error: assert (error && error_code == 4'd4);
      end
    end
  end

  // ---- reachability ----
  always @(*) begin
    if (!init && !rst) begin
      c_illegal_op: cover (error && error_code == 4'd1);
      c_overrun: cover (error && error_code == 4'd2);
      c_addr_error: cover (error && error_code == 4'd3);
      c_port_error: cover (error && error_code == 4'd4);
      c_unit_error: cover (error && error_code == 4'd5);
      c_busy_error: cover (error && error_code == 4'd6);
      c_done: cover (done);
      c_abort_seen: cover (aborted && dut_state_q == S_WAIT);
      c_start_at_end_refused: cover (end_taken_q && start_busy_q && error && error_code == 4'd6);
    end
  end

endmodule
`default_nettype wire
