`default_nettype none
// tt_loop_addr: nested-loop address generator of the contraction engine (golden/isa/contract.py ContractDesc).
//
// Walks a nest of NLOOPS loops, loop 0 the innermost (the packed buses hold loop i in [W*i +: W]); loops
// 0..NRED-1 are the reduction loops. Per beat it gives three element addresses
//   addr_x = base_x + sum_i idx_i * stride_x[i]   (mod 2^ADDR_W)
// and the reduction flags: first_red (every reduction index is 0: clear the accumulator), last_red (every
// reduction index is at its end: the output element is complete) and last (the final beat of the nest).
//
// No multipliers: per loop and operand a mark register holds the address with every inner index at 0. When
// loop k steps (all inner loops wrap), the new address is mark_k + stride_k, and it becomes the mark of loop k
// and of every inner loop. One adder per loop and operand, a one-hot mux, no set-up cycles. Whether a loop is at
// its final index is a register too (set when the loop restarts or steps), and so is which loops move on a beat
// (the AND of the inner loops' flags), so the step logic and the enables of the index and mark registers wait on
// no compare against the counts and no chain over the loops; the flag a loop takes when it steps (idx + 1 is its
// final index) is a register as well, so the index's carry chain ends in a register, not in the chain over the
// loops behind it. first_red is a register as well: a consumer's ready may depend on it (tt_contract waits for its
// buffer only at a new output element), and a compare of the indices ahead of ready would sit ahead of every enable on
// one path.
//
// Strides are ADDR_W-bit and the sums wrap modulo 2^ADDR_W, so a two's-complement stride walks backwards;
// the lowering emits only non-negative strides. The a and o walks can be narrower (A_AW, O_AW bits: their sums wrap
// there, their strides' and bases' higher bits are ignored and their addresses' are 0), for a walk that never
// leaves a small range (tt_contract's lane buffer load: a lane index and a buffer word). A count of 0 acts as 1.
//
// Handshake: start (any time; it restarts) loads the bases; from the next cycle valid is high with the first
// beat; a beat is consumed on a cycle with valid && ready; after the last beat valid falls and done rises
// (held until the next start or rst). counts and strides must be held stable from start until done; the
// bases are sampled at start only. rst clears valid and done; the datapath registers need no reset.
module tt_loop_addr #(
  parameter integer NLOOPS = 10,  // loops, 1..10
  parameter integer NRED   = 4,   // innermost loops that are reductions, 0..NLOOPS
  parameter integer CNT_W  = 16,  // count width, 1..32
  parameter integer ADDR_W = 20,  // address and stride width, 1..32
  parameter integer A_AW   = ADDR_W,  // bits of the a walk, 1..ADDR_W
  parameter integer O_AW   = ADDR_W   // bits of the o walk, 1..ADDR_W
) (
  input  wire                     clk,
  input  wire                     rst,
  input  wire                     start,
  input  wire [NLOOPS*CNT_W-1:0]  counts,    // loop i in [CNT_W*i +: CNT_W], unsigned
  input  wire [NLOOPS*ADDR_W-1:0] stride_a,  // loop i in [ADDR_W*i +: ADDR_W]
  input  wire [NLOOPS*ADDR_W-1:0] stride_b,
  input  wire [NLOOPS*ADDR_W-1:0] stride_o,
  input  wire [ADDR_W-1:0]        base_a,
  input  wire [ADDR_W-1:0]        base_b,
  input  wire [ADDR_W-1:0]        base_o,
  output wire                     valid,
  input  wire                     ready,
  output wire [ADDR_W-1:0]        addr_a,
  output wire [ADDR_W-1:0]        addr_b,
  output wire [ADDR_W-1:0]        addr_o,
  output wire                     first_red,
  output wire                     last_red,
  output wire                     last,
  output wire                     done
);

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (NLOOPS < 1 || NLOOPS > 10) begin : g_bad_nloops
      error_tt_loop_addr_NLOOPS_must_be_1_to_10 u_error ();
    end
    if (NRED < 0 || NRED > NLOOPS) begin : g_bad_nred
      error_tt_loop_addr_NRED_must_be_0_to_NLOOPS u_error ();
    end
    if (CNT_W < 1 || CNT_W > 32) begin : g_bad_cnt_w
      error_tt_loop_addr_CNT_W_must_be_1_to_32 u_error ();
    end
    if (ADDR_W < 1 || ADDR_W > 32) begin : g_bad_addr_w
      error_tt_loop_addr_ADDR_W_must_be_1_to_32 u_error ();
    end
    if (A_AW < 1 || A_AW > ADDR_W || O_AW < 1 || O_AW > ADDR_W) begin : g_bad_walk_w
      error_tt_loop_addr_A_AW_and_O_AW_must_be_1_to_ADDR_W u_error ();
    end
  endgenerate

  reg                     valid_q;
  reg                     done_q;
  reg [NLOOPS*CNT_W-1:0]  idx_q;
  reg [NLOOPS*A_AW-1:0]   mark_a_q;
  reg [NLOOPS*ADDR_W-1:0] mark_b_q;
  reg [NLOOPS*O_AW-1:0]   mark_o_q;
  reg [NLOOPS-1:0]        at_last_q;  // loop i is at its final index: (count == 0) || (idx == count - 1)
  reg [NLOOPS-1:0]        last_next_q;  // loop i's next step reaches its final index: idx + 2 == count
  reg                     first_red_q;  // every reduction index is 0
  // inner_last_q[i] (i < NLOOPS): every loop inside loop i is at its final index, so loop i moves on a beat;
  // inner_last_q[NLOOPS]: every loop is, the beat is the nest's last. Registers, kept with at_last_q, so that
  // the enables of the index and mark registers wait on no carry chain over the loops.
  reg [NLOOPS:0]          inner_last_q;
  wire                    all_last = inner_last_q[NLOOPS];

  function automatic [NLOOPS:0] prefix_and(input [NLOOPS-1:0] at_last);
    integer k;
    begin
      prefix_and[0] = 1'b1;
      for (k = 0; k < NLOOPS; k = k + 1) begin
        prefix_and[k + 1] = prefix_and[k] && at_last[k];
      end
    end
  endfunction

  // The stepping loop is the innermost one not at its end (one-hot: inner_last_q[i] && !at_last_q[i]); next_*
  // is its mark plus its stride.
  reg              last_red_c;
  reg [A_AW-1:0]   next_a;
  reg [ADDR_W-1:0] next_b;
  reg [O_AW-1:0]   next_o;
  reg              steps;
  integer          i;
  always @* begin
    last_red_c = 1'b1;
    next_a     = {A_AW{1'b0}};
    next_b     = {ADDR_W{1'b0}};
    next_o     = {O_AW{1'b0}};
    for (i = 0; i < NLOOPS; i = i + 1) begin
      steps  = inner_last_q[i] && !at_last_q[i];
      next_a = next_a | ({A_AW{steps}} & (mark_a_q[A_AW*i +: A_AW] + stride_a[ADDR_W*i +: A_AW]));
      next_b = next_b | ({ADDR_W{steps}} & (mark_b_q[ADDR_W*i +: ADDR_W] + stride_b[ADDR_W*i +: ADDR_W]));
      next_o = next_o | ({O_AW{steps}} & (mark_o_q[O_AW*i +: O_AW] + stride_o[ADDR_W*i +: O_AW]));
      if (i < NRED) begin
        last_red_c = last_red_c && at_last_q[i];
      end
    end
  end

  // The final-index flag a loop takes when it restarts at index 0 (count <= 1) or steps to idx + 1 (last_next_q;
  // a stepping loop has count >= 2), and last_next_q's own: at index 0 count == 2, after a step idx + 3 == count
  // (no overflow: a stepping loop's idx + 3 <= count + 1 <= 2^CNT_W); *_d: every loop's flags after a beat.
  localparam [CNT_W-1:0] CNT_ONE   = 1;
  localparam [CNT_W:0]   CNT_TWO   = 2;
  localparam [CNT_W:0]   CNT_THREE = 3;
  reg [NLOOPS-1:0] last_at_0;
  reg [NLOOPS-1:0] last_next_at_0;
  reg [NLOOPS-1:0] at_last_d;
  reg [NLOOPS-1:0] last_next_d;
  integer          n;
  always @* begin
    for (n = 0; n < NLOOPS; n = n + 1) begin
      last_at_0[n]      = counts[CNT_W*n +: CNT_W] <= CNT_ONE;
      last_next_at_0[n] = {1'b0, counts[CNT_W*n +: CNT_W]} == CNT_TWO;
      at_last_d[n]      = !inner_last_q[n] ? at_last_q[n] : at_last_q[n] ? last_at_0[n] : last_next_q[n];
      last_next_d[n]    = !inner_last_q[n] ? last_next_q[n] : at_last_q[n] ? last_next_at_0[n] :
                          ({1'b0, idx_q[CNT_W*n +: CNT_W]} + CNT_THREE) == {1'b0, counts[CNT_W*n +: CNT_W]};
    end
  end

  wire step = valid_q && ready;

  always @(posedge clk) begin
    if (rst) begin
      valid_q <= 1'b0;
      done_q  <= 1'b0;
    end else if (start) begin
      valid_q <= 1'b1;
      done_q  <= 1'b0;
    end else if (step && all_last) begin
      valid_q <= 1'b0;
      done_q  <= 1'b1;
    end
  end

  // Datapath: loops inside the stepping one restart (index 0, mark = the new address), the stepping loop
  // counts up, outer loops hold. Every reduction index is 0 again after a step exactly when they were all at
  // their ends (the stepping loop is outside them).
  integer j;
  always @(posedge clk) begin
    if (start) begin
      first_red_q  <= 1'b1;
      idx_q        <= {(NLOOPS*CNT_W){1'b0}};
      at_last_q    <= last_at_0;
      last_next_q  <= last_next_at_0;
      inner_last_q <= prefix_and(last_at_0);
      mark_a_q     <= {NLOOPS{base_a[A_AW-1:0]}};
      mark_b_q     <= {NLOOPS{base_b}};
      mark_o_q     <= {NLOOPS{base_o[O_AW-1:0]}};
    end else if (step && !all_last) begin
      first_red_q  <= last_red_c;
      at_last_q    <= at_last_d;
      last_next_q  <= last_next_d;
      inner_last_q <= prefix_and(at_last_d);
      for (j = 0; j < NLOOPS; j = j + 1) begin
        if (inner_last_q[j]) begin
          idx_q[CNT_W*j +: CNT_W]     <= at_last_q[j] ? {CNT_W{1'b0}} : idx_q[CNT_W*j +: CNT_W] + 1'b1;
          mark_a_q[A_AW*j +: A_AW]     <= next_a;
          mark_b_q[ADDR_W*j +: ADDR_W] <= next_b;
          mark_o_q[O_AW*j +: O_AW]     <= next_o;
        end
      end
    end
  end

  assign valid     = valid_q;
  assign addr_b    = mark_b_q[ADDR_W-1:0];
  generate
    if (A_AW < ADDR_W) begin : g_narrow_a
      assign addr_a = {{(ADDR_W-A_AW){1'b0}}, mark_a_q[A_AW-1:0]};
    end else begin : g_full_a
      assign addr_a = mark_a_q[A_AW-1:0];
    end
    if (O_AW < ADDR_W) begin : g_narrow_o
      assign addr_o = {{(ADDR_W-O_AW){1'b0}}, mark_o_q[O_AW-1:0]};
    end else begin : g_full_o
      assign addr_o = mark_o_q[O_AW-1:0];
    end
    if (A_AW < ADDR_W || O_AW < ADDR_W) begin : g_narrow_unused
      wire unused_high = ^{stride_a, stride_o, base_a, base_o};  // only the walks' low bits are read
    end
  endgenerate
  assign first_red = first_red_q;
  assign last_red  = last_red_c;
  assign last      = all_last;
  assign done      = done_q;

endmodule
`default_nettype wire
