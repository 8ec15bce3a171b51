`default_nettype none
// tt_lane_sum: the adder tree of the contraction engine's lane sum (golden/isa.py, lane sum): the sum of N signed
// WIDTH-bit words, a binary tree with a register at every level, so the sum of the words taken with in_valid leaves
// STAGES = clog2(N) cycles later with out_valid and the tag taken with them. A new set of words may enter every
// cycle. The sum is exact in WIDTH bits: the compiler bounds every reduction, and a lane's partial sum and any sum of
// them stay within the bound of the whole (SPEC 1.2), so no level needs a wider word (two's complement addition gives
// the same bits signed or unsigned at one width).
module tt_lane_sum #(
  parameter integer N     = 2,   // words, 2..256
  parameter integer WIDTH = 48,  // bits per word, >= 2
  parameter integer TAG_W = 1    // tag bits carried with the words, >= 1
) (
  input  wire               clk,
  input  wire               rst,
  input  wire               in_valid,
  input  wire [TAG_W-1:0]   in_tag,
  input  wire [N*WIDTH-1:0] in_data,   // word i in [WIDTH*i +: WIDTH]
  output wire               out_valid,
  output wire [TAG_W-1:0]   out_tag,
  output wire [WIDTH-1:0]   out_sum
);

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (N < 2 || N > 256) begin : g_bad_n
      error_tt_lane_sum_N_must_be_2_to_256 u_error ();
    end
    if (WIDTH < 2) begin : g_bad_width
      error_tt_lane_sum_WIDTH_must_be_at_least_2 u_error ();
    end
    if (TAG_W < 1) begin : g_bad_tag_w
      error_tt_lane_sum_TAG_W_must_be_at_least_1 u_error ();
    end
  endgenerate

  localparam integer STAGES = (N > 1) ? $clog2(N) : 1;
  localparam integer LEAVES = 1 << STAGES;  // the words, padded with zeros to a power of two

  // The tree as a heap: node k's children are nodes 2k + 1 and 2k + 2; the LEAVES - 1 inner nodes are registers
  // (node 0 the root), the leaves the input words. A node at depth d holds the sum of its children of the cycle
  // before, so the root holds the sum of the leaves of STAGES cycles ago.
  wire [LEAVES*WIDTH-1:0] leaves;
  generate
    if (LEAVES > N) begin : g_pad
      assign leaves = {{((LEAVES - N) * WIDTH){1'b0}}, in_data};
    end else begin : g_full
      assign leaves = in_data;
    end
  endgenerate

  reg  [(LEAVES-1)*WIDTH-1:0] node_q;  // no reset: out_valid says when the root holds a sum
  wire [(2*LEAVES-1)*WIDTH-1:0] tree = {leaves, node_q};  // node k in [WIDTH*k +: WIDTH]
  integer k;
  always @(posedge clk) begin
    for (k = 0; k < LEAVES - 1; k = k + 1) begin
      node_q[WIDTH*k +: WIDTH] <= tree[WIDTH*(2*k+1) +: WIDTH] + tree[WIDTH*(2*k+2) +: WIDTH];
    end
  end
  assign out_sum = node_q[WIDTH-1:0];

  tt_delay #(
    .WIDTH (TAG_W + 1),
    .DEPTH (STAGES),
    .RESET (1)
  ) u_tag (
    .clk (clk),
    .rst (rst),
    .d   ({in_tag, in_valid}),
    .q   ({out_tag, out_valid})
  );

endmodule
`default_nettype wire
