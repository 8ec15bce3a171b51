`default_nettype none
// tt_lfsr: the accelerator's single random stream (golden/SPEC.md section 3).
//
// A 32-bit right-shifting Galois LFSR, mask 0x80200003 (x^32 + x^22 + x^2 + x + 1). One draw = 8 steps;
// the draw is the low byte of the new state. DRAWS draws are offered per cycle (leap-ahead): rnd byte i
// is draw i counted from the current state. A cycle with advance high consumes them: all DRAWS (the state jumps
// DRAWS draws ahead) with leap high, else only draw 0 (one draw ahead). The leap-ahead takes the constant GF(2)
// matrices J^1..J^(2 DRAWS), computed at elaboration: each bit is one XOR over the state bits of its row.
//
// Latency: rnd and state are registers (rnd is computed from the next state before the edge); seed_load and
// advance take effect on the next edge.
// Priority: rst > seed_load > advance. Reset loads the state of seed 0 (0xA5A5A5A5).
module tt_lfsr #(
  parameter integer DRAWS = 1  // draws per cycle, 1..16
) (
  input  wire                 clk,
  input  wire                 rst,
  input  wire                 seed_load,  // state <= map(seed)
  input  wire [31:0]          seed,
  input  wire                 advance,    // consume draws: the DRAWS draws on rnd with leap, else draw 0
  input  wire                 leap,
  output wire [8*DRAWS-1:0]   rnd,        // draw i in bits [8i+7:8i]
  output wire [31:0]          state       // current state, for checkpoints
);

`include "tt_arch.vh"  // LFSR_MASK, LFSR_SEED_XOR, LFSR_STEPS_PER_DRAW

  // Elaboration-time parameter check: instantiating a module that does not exist stops both
  // Icarus 11 and Verilator with the module name as the message (Icarus 11 has no elaboration $fatal).
  generate
    if (DRAWS < 1 || DRAWS > 16) begin : g_bad_draws
      error_tt_lfsr_DRAWS_must_be_1_to_16 u_error ();
    end
  endgenerate

  // One draw: eight Galois steps.
  function automatic [31:0] lfsr_draw(input [31:0] s);
    integer i;
    reg [31:0] t;
    begin
      t = s;
      for (i = 0; i < LFSR_STEPS_PER_DRAW; i = i + 1) begin
        t = {1'b0, t[31:1]} ^ (t[0] ? LFSR_MASK : 32'd0);
      end
      lfsr_draw = t;
    end
  endfunction

  // The state n draws after s. Elaboration only: the hardware takes the matrices below.
  function automatic [31:0] ahead(input [31:0] s, input integer n);
    integer d;
    begin
      ahead = s;
      for (d = 0; d < n; d = d + 1) begin
        ahead = lfsr_draw(ahead);
      end
    end
  endfunction

  // The GF(2) matrix of n draws (the steps are linear), column j = the state n draws after the unit state e_j,
  // in bits 32 j .. 32 j + 31; row_of gives row k: the state bits whose XOR is bit k n draws on.
  function automatic [32*32-1:0] matrix(input integer n);
    integer j;
    begin
      for (j = 0; j < 32; j = j + 1) begin
        matrix[32*j +: 32] = ahead(32'd1 << j, n);
      end
    end
  endfunction

  function automatic [31:0] row_of(input [32*32-1:0] m, input [4:0] k);
    integer j;
    begin
      for (j = 0; j < 32; j = j + 1) begin
        row_of[j] = m[32*j + {27'd0, k}];
      end
    end
  endfunction

  reg  [31:0] state_q;
  wire [31:0] seed_state = seed ^ LFSR_SEED_XOR;
  wire        seed_zero = seed_state == 32'd0;  // the LFSR's fixed point: the SPEC maps it to 1

  // Every bit n draws ahead is the XOR of the state bits in its matrix row, a balanced tree of a few LUT levels.
  // Written as the chain of steps instead, the logic keeps the chain's depth: synthesis does not rebalance it.
  // ahead_*: the low bytes of the states 1 .. 2 DRAWS draws after state_q (rnd after a leap reaches 2 DRAWS);
  // step_q and leap_q: the states 1 and DRAWS draws on, whole; seed_ahead: the low bytes 1 .. DRAWS draws after the
  // seed's state.
  localparam integer NAHEAD = 2 * DRAWS;
  wire [8*NAHEAD-1:0] ahead_lo;
  wire [31:0]         step_q;
  wire [31:0]         leap_q;
  wire [8*DRAWS-1:0]  seed_ahead;
  genvar gn, gk;
  generate
    for (gn = 1; gn <= NAHEAD; gn = gn + 1) begin : g_ahead
      localparam [32*32-1:0] M        = matrix(gn);
      localparam [31:0]      FROM_ONE = M[31:0];  // the state n draws after state 1
      for (gk = 0; gk < 32; gk = gk + 1) begin : g_bit
        localparam [31:0] ROW = row_of(M, gk);
        if (gk < 8) begin : g_lo
          assign ahead_lo[8*(gn-1) + gk] = ^(state_q & ROW);
          if (gn <= DRAWS) begin : g_seed
            assign seed_ahead[8*(gn-1) + gk] = seed_zero ? FROM_ONE[gk] : ^(seed_state & ROW);
          end
        end
        if (gn == 1) begin : g_step
          assign step_q[gk] = ^(state_q & ROW);
        end
        if (gn == DRAWS) begin : g_leap
          assign leap_q[gk] = ^(state_q & ROW);
        end
      end
    end
  endgenerate

  // The state of the next cycle, and its draws registered with it: rnd leaves a flip-flop, so the XOR trees
  // of the leap-ahead sit before the register instead of in front of the requantiser's bias. Draw d of a state
  // n draws after state_q is ahead_lo's byte n + d.
  function automatic [8*DRAWS-1:0] draws_of(input [31:0] s);
    integer d;
    reg [31:0] t;
    begin
      t = s;
      for (d = 0; d < DRAWS; d = d + 1) begin
        t = lfsr_draw(t);
        draws_of[8*d +: 8] = t[7:0];
      end
    end
  endfunction
  localparam [8*DRAWS-1:0] RESET_DRAWS = draws_of(LFSR_SEED_XOR);

  reg [31:0]        state_d;
  reg [8*DRAWS-1:0] rnd_d;
  always @* begin
    if (rst) begin
      state_d = LFSR_SEED_XOR;
      rnd_d   = RESET_DRAWS;
    end else if (seed_load) begin
      state_d = seed_zero ? 32'd1 : seed_state;
      rnd_d   = seed_ahead;
    end else if (advance && leap) begin
      state_d = leap_q;
      rnd_d   = ahead_lo[8*DRAWS +: 8*DRAWS];
    end else if (advance) begin
      state_d = step_q;
      rnd_d   = ahead_lo[8 +: 8*DRAWS];
    end else begin
      state_d = state_q;
      rnd_d   = ahead_lo[0 +: 8*DRAWS];
    end
  end

  reg [8*DRAWS-1:0] rnd_q;
  always @(posedge clk) begin
    state_q <= state_d;
    rnd_q   <= rnd_d;
  end
  assign rnd = rnd_q;

  assign state = state_q;

endmodule
`default_nettype wire
